"""The frequency rules of HF's rope types (``default``, ``linear``, ``dynamic``, ``yarn``, ``longrope``,
``llama3``), written into the description-file document a model config becomes.
"""

from __future__ import annotations

import sympy as sp

from ..variants._formula import parse_formula
from ..variants._spec import MAX_LENGTH
from ._model import cfg_number_text

__all__ = []


def _frequencies(cfg, doc, rope, prefix, rope_type, notes, rotary_dim, turning_pairs=None):
    """Fill ``doc`` with the frequency rule of ``rope_type``; return the attention factor formula or None."""
    params = doc["params"]
    pairs = rotary_dim // 2
    if rope_type == "default":
        doc["frequencies"] = {"rule": "geometric", "base": "theta"}
        notes.append("rope_type default: omega_r = theta^(-2r/d)")
        return None
    factor = cfg.number(rope, "factor", prefix)
    if rope_type == "proportional":
        turning, params["proportion"] = turning_pairs  # (the reader's proportional_width)
        params["turning"] = turning
        params["factor"] = 1.0 if factor is None else factor
        doc["frequencies"] = {"rule": "formula", "formula": "where(r < turning, theta**(-2*r/d), 0) / factor"}
        notes.append(f"rope_type proportional: omega_r = theta^(-2r/d) / factor for the first {turning} pairs, "
                     f"0 for the other {pairs - turning} (they do not turn); factor "
                     f"{params['factor']:g}{'' if factor is not None else ' (HF default)'}")
        return None
    max_pos = _positions(cfg, "max_position_embeddings")
    original = None
    if rope_type in ("yarn", "longrope", "llama3"):
        # HF's standardize_rope_params (run again by every rope init function) moves a top-level value in
        top = _positions(cfg, "original_max_position_embeddings")
        inner = cfg.count(rope, "original_max_position_embeddings", prefix, MAX_LENGTH) or None
        original = top or inner or max_pos
        if original is None:
            raise cfg.fail(prefix + "original_max_position_embeddings",
                           f"is required for rope_type {rope_type!r} (or max_position_embeddings)")
        source = ("top level" if top else prefix.rstrip(".") if inner else "max_position_embeddings")
        notes.append(f"original_max_position_embeddings {original} ({source})")
        params["L0"] = original
    if rope_type in ("linear", "dynamic", "llama3") and factor is None:
        raise cfg.fail(prefix + "factor", f"is required for rope_type {rope_type!r}")

    if rope_type == "linear":
        params["factor"] = factor
        doc["frequencies"] = {"rule": "formula", "formula": "theta**(-2*r/d) / factor"}
        notes.append(f"rope_type linear: every frequency divided by factor {factor:g}")
        return None
    if rope_type == "dynamic":
        if max_pos is None:
            raise cfg.fail("max_position_embeddings", "is required for rope_type 'dynamic' (the length the base "
                                                      "starts to grow at)")
        params.update(factor=factor, L=max_pos)
        doc["frequencies"] = {"rule": "geometric",
                              "base": "theta * Max(factor * seq_len / L - (factor - 1), 1)**(d / (d - 2))"}
        doc["length"] = {"threshold": max_pos}
        notes.append(f"rope_type dynamic: base grows with the call length seq_len = max position id + 1 once "
                     f"seq_len > max_position_embeddings {max_pos} (factor {factor:g})")
        return None
    if rope_type == "llama3":
        low = cfg.number(rope, "low_freq_factor", prefix)
        high = cfg.number(rope, "high_freq_factor", prefix)
        for key, value in (("low_freq_factor", low), ("high_freq_factor", high)):
            if value is None:
                raise cfg.fail(prefix + key, "is required for rope_type 'llama3'")
        params.update(factor=factor, low_freq_factor=low, high_freq_factor=high)
        if low < high:
            smooth = "ramp(L0 / wavelength, low_freq_factor, high_freq_factor)"
            band = ""
        else:
            # HF's torch.where chain with no medium band (low_freq_factor >= high_freq_factor): a pair is
            # divided by factor when its wavelength exceeds L0 / low_freq_factor, else kept; never smoothed
            # (equality would need 2 pi / omega rational)
            smooth = "ceiling(clip(L0 / wavelength - low_freq_factor, 0, 1))"
            band = (f"; low_freq_factor >= high_freq_factor: no smoothed band, as HF computes it (pairs with "
                    f"wavelength > {cfg_number_text(params.get('L0'))} / {low:g} divided by factor, the others kept)")
        doc["frequencies"] = {"rule": "formula", "formula": "omega * ((1 - smooth) / factor + smooth)",
                              "let": {"omega": "theta**(-2*r/d)", "wavelength": "2 * pi / omega",
                                      "smooth": smooth}}
        notes.append(f"rope_type llama3: factor {factor:g}, low_freq_factor {low:g}, high_freq_factor {high:g}"
                     + band)
        return None
    if factor is None:
        if max_pos is None:
            raise cfg.fail(prefix + "factor", f"is required for rope_type {rope_type!r} (or max_position_embeddings)")
        factor = max_pos / original  # HF: the ratio when the config gives no factor
        notes.append(f"factor = max_position_embeddings / original = {max_pos} / {original}")
    params["factor"] = factor
    attention = cfg.number(rope, "attention_factor", prefix)
    if rope_type == "yarn":
        return _yarn(cfg, doc, rope, prefix, notes, rotary_dim, factor, attention)
    # longrope
    short = cfg.factors(rope, "short_factor", prefix, pairs)
    long = cfg.factors(rope, "long_factor", prefix, pairs)
    doc["frequencies"] = {"rule": "geometric", "base": "theta", "factors": short}
    doc["length"] = {"threshold": original, "long_factors": long}
    notes.append(f"rope_type longrope: short_factor while seq_len <= {original}, long_factor after")
    if attention is not None:
        return attention
    if factor <= 1:
        return None
    return "sqrt(1 + log(factor) / log(L0))"


def _yarn(cfg, doc, rope, prefix, notes, rotary_dim, factor, attention):
    params = doc["params"]
    beta_fast = cfg.number(rope, "beta_fast", prefix) or 32  # HF: `or`, so 0 means the default too
    beta_slow = cfg.number(rope, "beta_slow", prefix) or 1
    truncate = rope.get("truncate", True)
    if not isinstance(truncate, bool):
        raise cfg.fail(prefix + "truncate", f"expected true or false, got {truncate!r}"[:200])
    params.update(beta_fast=beta_fast, beta_slow=beta_slow)
    d = rotary_dim
    low = f"{d} * log(L0 / (beta_fast * 2 * pi)) / (2 * log(theta))"
    high = f"{d} * log(L0 / (beta_slow * 2 * pi)) / (2 * log(theta))"
    if truncate:
        low, high = f"floor({low})", f"ceiling({high})"
    low, high = f"Max({low}, 0)", f"Min({high}, {d - 1})"
    # HF adds 0.001 to the top of the ramp when both ends meet
    exact = {name: parse_formula(value, names=set(), where=f"{cfg.source}: {name}").build({})
             for name, value in params.items() if name in ("theta", "L0", "beta_fast", "beta_slow")}
    exact.update({name: parse_formula(text, names=set(exact), where=f"{cfg.source}: yarn ramp").build(exact)
                  for name, text in (("low", low), ("high", high))})
    if exact["low"] == exact["high"]:
        high = f"{high} + 1/1000"
    params.update(low=low, high=high)
    doc["frequencies"] = {"rule": "formula",
                          "formula": "omega * (1 - ramp(r, low, high)) + omega / factor * ramp(r, low, high)",
                          "let": {"omega": "theta**(-2*r/d)"}}
    notes.append(f"rope_type yarn: factor {factor:g}, beta_fast {beta_fast:g}, beta_slow {beta_slow:g}, "
                 f"{'truncated' if truncate else 'untruncated'} ramp over pairs "
                 f"{sp.N(exact['low'], 6)}..{sp.N(exact['high'], 6)}")
    if attention is not None:
        return attention
    mscale = cfg.number(rope, "mscale", prefix, low=0.0, strict_low=False)
    mscale_all_dim = cfg.number(rope, "mscale_all_dim", prefix, low=0.0, strict_low=False)
    if factor <= 1:
        return None
    if mscale and mscale_all_dim:
        params.update(mscale=mscale, mscale_all_dim=mscale_all_dim)
        return "(0.1 * mscale * log(factor) + 1) / (0.1 * mscale_all_dim * log(factor) + 1)"
    return "0.1 * log(factor) + 1"


def _positions(cfg, key: str) -> int | None:
    name = "n_positions" if "n_positions" in cfg.data and key == "max_position_embeddings" else key
    value = cfg.count(cfg.data, name, "", MAX_LENGTH)
    return value or None
