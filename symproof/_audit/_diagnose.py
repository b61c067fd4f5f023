"""Name what differs between the user's map and the declared one, with a minimal input for each.

The verdict is decided elsewhere, entry by entry against the declared
variant's kernel; this module only *explains* a difference.  It aligns the
structure first (rotary width, pairing, blocks that are not rotations,
scales), then looks at the angles of the aligned pairs and tries, in order,
the root causes that explain every pair at once: a flipped sign, a position
offset, all frequencies times one factor, another denominator, another base,
angles computed in float16 or bfloat16.  A hypothesis is accepted only when
it reproduces every probed angle (within a tolerance a few times the float32
one); otherwise the differing pairs are listed with their measured frequency.

Longer than 600 lines: the diagnoses are one table of conventions and the tests that tell them
apart, read in order; each rests on the ones before it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..kernels import round_to_bfloat16
from ._model import Model
from ._structure import ROTATION_TOLERANCE, Structure, wrap

__all__ = ["Difference", "Analysis", "analyse", "ANGLE_ATOL", "ANGLE_REL", "WHATS"]

WHATS = ("pairing", "frequency", "denominator", "direction", "position_offset", "rotary_dim", "scaling",
         "precision", "nonlinear", "stateful")

#: an angle matches when it is within ANGLE_ATOL + ANGLE_REL * |angle| (float32 angle arithmetic is ~2^-22)
ANGLE_ATOL = 1e-5
ANGLE_REL = 2.0 ** -19
#: a fitted hypothesis (estimated from the probes) may miss by this many tolerances
LOOSE = 8.0
#: a scale matches within this relative distance
SCALE_REL = 1e-5
#: unit round-off and the value-rounding slack of the low-precision formats
_UNIT = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
_SLACK = {"float16": 2.0 ** -9, "bfloat16": 2.0 ** -6}
_SMALL_POSITION = 8


def _num(value, digits: int = 7):
    value = float(value)
    if value == int(value) and abs(value) < 2 ** 53:
        return int(value)
    return float(f"{value:.{digits}g}")


@dataclass
class Difference:
    """One named difference: ``what`` (one of :data:`WHATS`), ``expected``, ``found`` and a minimal input."""

    what: str
    expected: object
    found: object
    detail: str
    basis: int | None = None
    position: int | None = None
    expected_output: dict | None = None
    found_output: dict | None = None
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = {"what": self.what, "expected": self.expected, "found": self.found, "detail": self.detail}
        if self.basis is not None:
            out["input"] = {"basis": self.basis, "position": self.position,
                            "x": f"e_{self.basis} (1 at coordinate {self.basis}, 0 elsewhere)"}
        elif self.extra.get("input"):
            out["input"] = self.extra["input"]
        if self.expected_output is not None:
            out["expected_output"] = self.expected_output
            out["found_output"] = self.found_output
        for key, value in self.extra.items():
            if key != "input":
                out[key] = value
        return out


@dataclass
class Analysis:
    structure: Structure
    differences: list
    positions: np.ndarray
    residual: np.ndarray  # (T, n): found angle minus the declared one (aligned pairs), wrapped
    tolerance: np.ndarray  # (T, n)
    pairs: list  # the found pairs the columns of residual belong to


def _vector(column: np.ndarray) -> dict:
    return {str(i): _num(v, 9) for i, v in enumerate(column) if abs(v) > 1e-12}


class _Context:
    def __init__(self, model: Model, found: np.ndarray, expected: np.ndarray, positions: np.ndarray,
                 structure: Structure):
        self.declared = model
        self.found = found
        self.expected = expected
        self.positions = positions
        self.structure = structure
        self.differences: list = []

    def add(self, what, expected, found, detail, basis=None, t=None, **extra):
        diff = Difference(what, expected, found, detail, extra=extra)
        if basis is not None and t is not None:
            diff.basis, diff.position = int(basis), int(self.positions[t])
            diff.expected_output = _vector(self.expected[t][:, basis])
            diff.found_output = _vector(self.found[t][:, basis])
        self.differences.append(diff)
        return diff

    def first_position_differing(self, column: int) -> int:
        """The first probe where the function's image of ``e_column`` differs from the declared one."""
        gap = np.abs(self.found[:, :, column] - self.expected[:, :, column]).max(axis=1)
        hits = np.flatnonzero(gap > 1e-6)
        return int(hits[0]) if hits.size else 0


# -- structure ------------------------------------------------------------------------------------


def _pairs_text(pairs, limit: int = 4) -> str:
    shown = ", ".join(f"({a}, {b})" for a, b in pairs[:limit])
    return shown + (", ..." if len(pairs) > limit else "")


def _pairing_text(pairing: str, width: int) -> str:
    return {"adjacent": f"adjacent pairs (2r, 2r+1) over {width} coordinates",
            "half": f"half pairs (r, r+{width // 2}) over {width} coordinates"}[pairing]


def _check_rotary_dim(ctx: _Context, model: Model) -> Model | None:
    s = ctx.structure
    declared = sorted(c for p in model.pairs for c in p)
    if s.rotated_width == len(declared):
        return model
    differing = sorted(set(s.rotated) ^ set(declared))
    j = differing[0]
    t = ctx.first_position_differing(j)
    rebuilt = model.rebuilt(rotated_width=s.rotated_width) if s.rotated_width else None
    if s.rotated_width == 0:
        detail = "no coordinate moves with position: the function rotates nothing"
    else:
        detail = (f"{s.rotated_width} coordinates move with position where the model rotates "
                  f"{len(declared)}; coordinate {j} is {'rotated' if j in s.rotated else 'copied'} by the function "
                  f"and {'rotated' if j in declared else 'copied'} by the model")
    ctx.add("rotary_dim", len(declared), s.rotated_width, detail, basis=j, t=t)
    return rebuilt


def _check_pairing(ctx: _Context, model: Model) -> Model:
    s = ctx.structure
    if s.pairs == model.pairs and not s.groups and not s.lone:
        return model
    if s.groups or s.lone:
        if s.groups:
            group = s.groups[0]
            found = f"coordinates {list(group)} mix together (a group of {len(group)}, not pairs)"
            j = group[0]
        else:
            j = s.lone[0]
            found = (f"coordinate {j} is multiplied by a position-dependent factor without mixing with a partner "
                     "(a rotation without its rotate-half / partner term)")
        t = ctx.first_position_differing(j)
        ctx.add("pairing", _pairing_text(model.pairing, model.variant.rotated_width), found,
                f"the model rotates pairs; {found}", basis=j, t=t)
        return model
    found_pairing = s.pairing
    width = s.rotated_width
    found_text = _pairing_text(found_pairing, width) if found_pairing else f"pairs {_pairs_text(s.pairs)}"
    model_partner = {a: b for a, b in model.pairs} | {b: a for a, b in model.pairs}
    found_partner = {a: b for a, b in s.pairs} | {b: a for a, b in s.pairs}
    j = next((c for c in sorted(found_partner) if model_partner.get(c) != found_partner[c]), min(found_partner))
    detail = (f"coordinate {j} is rotated with coordinate {found_partner[j]}; the model rotates it with "
              f"{model_partner.get(j, 'nothing')}")
    extra = {}
    if found_pairing and found_pairing != model.pairing:
        if width == model.variant.width:
            extra["fix"] = (f"relayout_pairing(w, n_heads, src={model.pairing!r}, dst={found_pairing!r}) on Wq "
                            "and Wk (and their biases) re-lays the weights for this pairing")
        else:
            extra["fix"] = (f"permute the first {width} output rows of each head of Wq and Wk by "
                            f"pairing_permutation({width}, {model.pairing!r}, {found_pairing!r}); "
                            "relayout_pairing permutes whole heads, so it does not apply to a partial rotation")
    ctx.add("pairing", _pairing_text(model.pairing, width) if width == model.variant.rotated_width
            else f"pairs {_pairs_text(model.pairs)}", found_text, detail, basis=j, t=ctx.first_position_differing(j), **extra)
    if found_pairing:
        rebuilt = model.rebuilt(pairing=found_pairing)
        if rebuilt is not None:
            return rebuilt
    return model


def _check_blocks(ctx: _Context, n: int) -> np.ndarray:
    """Pairs whose block is a scaled rotation at every probe (a mask); name the others."""
    s = ctx.structure
    limit = ROTATION_TOLERANCE * np.maximum(s.scale[:, :n], 1.0)
    bad = s.misfit[:, :n] > limit
    if bad.any():
        t, r = (int(v) for v in np.argwhere(bad)[0])
        a, b = s.pairs[r]
        block = ctx.found[t][np.ix_([a, b], [a, b])]
        found = [[_num(v, 6) for v in row] for row in block]
        ctx.add("pairing", "a rotation block [[cos, -sin], [sin, cos]] (times a scale)", found,
                f"coordinates ({a}, {b}) mix by {found} at position {int(ctx.positions[t])}, which is not a "
                f"rotation (nor a scaled one); {int(bad.any(axis=0).sum())} pair(s) are like this",
                basis=a, t=t)
    return ~bad.any(axis=0)


def _check_scaling(ctx: _Context, model: Model, n: int, rotating: np.ndarray) -> Model:
    s = ctx.structure
    # coordinates the function and the declared model both leave unrotated (times the model's own constant)
    rotated_by_model = {c for p in ctx.declared.pairs for c in p} | {c for p in model.pairs for c in p}
    both = [(k, j) for k, j in enumerate(s.copied) if j not in rotated_by_model]
    if both:
        found_scale = np.array([s.copied_scale[k] for k, _ in both])
        copied_expected = np.array([float(np.median(ctx.expected[:, j, j])) for _, j in both])
        gap = np.abs(found_scale - copied_expected)
        if (gap > SCALE_REL * np.maximum(np.abs(copied_expected), 1)).any():
            k = int(np.argmax(gap))
            j = both[k][1]
            ctx.add("scaling", _num(copied_expected[k]), _num(found_scale[k]),
                    f"coordinate {j} (not rotated) is multiplied by {_num(found_scale[k])} where the model "
                    f"copies it times {_num(copied_expected[k])}", basis=j, t=0)
    if n == 0 or not rotating.any():
        return model
    want = model.scales(ctx.positions)[:, :n][:, rotating]
    got = s.scale[:, :n][:, rotating]
    ratio = got / want
    if np.all(np.abs(ratio - 1) <= SCALE_REL):
        return model
    c = float(np.median(ratio))
    columns = np.flatnonzero(rotating)
    if np.all(np.abs(ratio - c) <= SCALE_REL * abs(c)):
        t, k = 0, 0
        r = int(columns[k])
        expected = _num(want[t, k]) if np.ptp(want) <= SCALE_REL * np.abs(want).max() else "as declared"
        if expected == 1:
            detail = f"every rotated pair is multiplied by {_num(c)}, a scaling the model does not have"
        elif abs(float(np.median(got)) - 1) <= SCALE_REL:
            detail = f"the model's attention scaling {expected} is missing: rotated pairs keep their length"
        else:
            detail = f"rotated pairs are scaled by {_num(c)} times the model's scale"
        ctx.add("scaling", expected, _num(c * want[t, k]) if expected != "as declared" else f"{_num(c)} x declared",
                detail, basis=s.pairs[r][0], t=t, factor=_num(c))
        model = dataclasses.replace(model, extra_scale=model.extra_scale * c)
    elif np.abs(ratio - 1).max() > 2 * _SLACK["bfloat16"]:
        t, k = (int(v) for v in np.unravel_index(np.argmax(np.abs(ratio - 1)), ratio.shape))
        r = int(columns[k])
        ctx.add("scaling", _num(want[t, k]), _num(got[t, k]),
                f"pair {r} has length {_num(got[t, k])} at position {int(ctx.positions[t])} where the model "
                f"scales it by {_num(want[t, k])}; the scale is not one constant factor", basis=s.pairs[r][0], t=t)
    return model


# -- angles ---------------------------------------------------------------------------------------


def _estimate_thetas(phi: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Per-pair frequency from angle increments over positions, unwrapped while they stay consistent."""
    dg = g - g[0]
    order = [t for t in np.argsort(dg) if dg[t] > 0]
    if not order:
        return np.full(phi.shape[1], np.nan)
    first = order[0]
    est = wrap(phi[first] - phi[0]) / dg[first]
    live = np.ones(phi.shape[1], dtype=bool)
    for t in order[1:]:
        value = phi[t] - phi[0]
        pred = est * dg[t]
        unwrapped = value + 2 * np.pi * np.round((pred - value) / (2 * np.pi))
        new = unwrapped / dg[t]
        consistent = np.abs(new - est) * dg[t] < 0.5
        live &= consistent
        est = np.where(live, new, est)
    return est


class _Angles:
    def __init__(self, ctx: _Context, model: Model, n: int, rotating: np.ndarray):
        self.ctx, self.model, self.n = ctx, model, n
        self.cols = np.flatnonzero(rotating)
        self.phi = ctx.structure.angle[:, :n][:, self.cols]
        self.base = model.angles(ctx.positions)[:, :n][:, self.cols]

    def tolerance(self, angles):
        return ANGLE_ATOL + ANGLE_REL * np.abs(angles)

    def residual(self, angles):
        return wrap(self.phi - angles)

    def fits(self, angles, factor: float = 1.0, slack: float = 0.0) -> bool:
        return bool(np.all(np.abs(self.residual(angles)) <= factor * self.tolerance(angles) + slack))

    def angles_of(self, model: Model):
        return model.angles(self.ctx.positions)[:, :self.n][:, self.cols]

    def first_failure(self, angles=None):
        angles = self.base if angles is None else angles
        bad = np.abs(self.residual(angles)) > self.tolerance(angles)
        t, k = (int(v) for v in np.argwhere(bad)[0])
        return t, k

    def basis_of(self, k: int) -> int:
        return self.ctx.structure.pairs[int(self.cols[k])][0]


def _same_as_another_base(variant, model: Model, d_hat: int) -> str:
    """The other reading of a denominator: ``b^(-2r/d_hat) = (b^(d/d_hat))^(-2r/d)``, base ``b^(d/d_hat)`` at
    the model's denominator ``d`` gives the same frequencies; the numbers cannot tell the two apart."""
    if variant.rule != "geometric" or variant.base is None:
        return ""
    try:
        declared = float(variant.base.build({**variant.width_env(), "seq_len": variant._length(model.seq_len)}))
    except Exception:  # noqa: BLE001 - a base that needs more than the widths: no second reading
        return ""
    d_now = variant.freq_denominator
    other = declared ** (d_now / d_hat)
    shown = _num(float(f"{other:.6g}"))
    return (f"; equally, base {shown} at denominator {d_now} gives the same frequencies "
            f"({_num(declared)}^(-2r/{d_hat}) = {shown}^(-2r/{d_now})): a wrong base or a wrong denominator, "
            "the numbers cannot tell which")


def _mask(A: "_Angles") -> np.ndarray:
    mask = np.zeros(A.n, dtype=bool)
    mask[A.cols] = True
    return mask


def _angle_differences(ctx: _Context, model: Model, n: int, rotating: np.ndarray) -> None:
    A = _Angles(ctx, model, n, rotating)
    if A.cols.size == 0 or A.fits(A.base):
        return
    t0, k0 = A.first_failure()
    basis, pair = A.basis_of(k0), int(A.cols[k0])
    positions = ctx.positions
    thetas = model.thetas[:n][A.cols]

    # a flipped sign
    if A.fits(-A.base, LOOSE):
        ctx.add("direction", "rotation by +m*theta (first coordinate of a pair towards the second)",
                "rotation by -m*theta", "every pair turns the other way: the sign of sin is flipped (or the "
                "pair's coordinates are swapped, or positions are negated)", basis=basis, t=t0)
        return

    # a position offset (one sign or the other)
    g1 = float(model.transform(np.array([1.0]))[0] - model.transform(np.array([0.0]))[0])
    top = int(np.argmax(np.abs(thetas)))
    candidates = []
    if g1 != 0 and thetas[top] != 0:
        k_hat = A.phi[0, top] / (thetas[top] * g1)
        if abs(k_hat - round(k_hat)) < 0.05 and round(k_hat) != 0:
            candidates.append(int(round(k_hat)))
    candidates += [k for k in (1, -1, 2, -2) if k not in candidates]
    for sign in (1, -1):
        for k in candidates:
            trial = dataclasses.replace(model, sign=model.sign * sign, offset=model.offset + k)
            if A.fits(A.angles_of(trial), LOOSE):
                _add_offset(ctx, A, k, sign, basis, t0)
                return

    # positions ignored: token t is rotated by the angle of position t (its index in the sequence)
    index = np.arange(len(positions), dtype=np.float64)
    by_index = model.sign * model.transform(index + model.offset)[:, None] * thetas[None, :]
    if not np.array_equal(index, positions) and A.fits(by_index, LOOSE):
        t = int(np.flatnonzero(index != positions)[0])
        ctx.add("position_offset", "the angle of the given position m",
                "the angle of the token's index t in the sequence (positions ignored)",
                f"the function ignores the positions it is given and rotates the t-th token by the angle of "
                f"position t (e.g. arange(T) instead of position_ids): position {int(positions[t])} at index {t} "
                f"gets the angle of position {t}", basis=basis, t=t)
        return

    g = model.transform(positions.astype(np.float64) + model.offset) * model.sign
    est = _estimate_thetas(A.phi, g)
    usable = np.isfinite(est) & (thetas != 0)

    # one factor on every frequency
    if usable.any():
        c_all = est[usable] / thetas[usable]
        c = float(np.median(c_all))
        if c != 0 and abs(c - 1) > 1e-6 and np.all(np.abs(c_all - c) <= 1e-4 * abs(c)):
            nice = Fraction(c).limit_denominator(64)
            c_try = [float(nice), c] if abs(float(nice) - c) <= 1e-6 * abs(c) else [c]
            for value in c_try:
                if A.fits(A.base * value, LOOSE):
                    text = str(nice) if value == float(nice) else f"{value:.7g}"
                    ctx.add("frequency", "omega_r as declared", f"{text} * omega_r for every pair",
                            f"every angle is {text} times the declared one: the positions (or all frequencies) "
                            f"are scaled by {text} (e.g. a position interpolation applied or omitted)",
                            basis=basis, t=t0, factor=_num(value))
                    return

    # another denominator
    variant = model.variant
    logs_ok = usable & (thetas > 0) & (thetas != 1) & (est > 0) & (est < 1) & (est != 1)
    if logs_ok.any():
        d_now = variant.freq_denominator
        d_all = d_now * np.log(thetas[logs_ok]) / np.log(est[logs_ok])
        d_hat = int(round(float(np.median(d_all)) / 2) * 2)
        if 2 <= d_hat <= 16384 and d_hat != d_now:
            trial = model.rebuilt(denominator=d_hat)
            if trial is not None and A.fits(A.angles_of(trial), LOOSE):
                base = variant.base.text if variant.rule == "geometric" and variant.base is not None else "base"
                declared = ctx.declared.variant.freq_denominator
                note = "" if declared == d_now else (f" (the model's denominator is its rotated width: {declared} "
                                                     f"for its {declared} rotated coordinates, {d_now} at the "
                                                     "function's rotated width)")
                both = _same_as_another_base(variant, model, d_hat)
                ctx.add("denominator", declared, d_hat,
                        f"denominator {d_hat} where the model says {declared}: all frequencies of pair r match "
                        f"{base}^(-2r/{d_hat})" + (" (the head width)" if d_hat == variant.width != d_now else "")
                        + note + both, basis=basis, t=t0, pairs_checked=int(A.cols.size),
                        **({"also": "base"} if both else {}))
                return

    # a length-dependent rule in the other regime (LongRoPE's short factors in a long call, or the reverse)
    if variant.length_dependent and model.seq_len is not None:
        threshold = variant.length_threshold
        other_len = threshold if model.seq_len > threshold else threshold + 1
        try:
            other = Model.of(variant, other_len)
        except Exception:  # noqa: BLE001 - a rule that cannot be read there: no such hypothesis
            other = None
        if other is not None and not np.array_equal(other.thetas, model.thetas):
            other = dataclasses.replace(other, sign=model.sign, offset=model.offset, extra_scale=model.extra_scale)
            if A.fits(A.angles_of(other), LOOSE):
                regime, now = ("short", "long") if model.seq_len > threshold else ("long", "short")
                ctx.add("frequency", f"the {now}-call frequencies (call length {model.seq_len})",
                        f"the {regime}-call frequencies (as for a call of length {other_len})",
                        f"the frequencies are those the model uses for calls of length "
                        f"{'<=' if regime == 'short' else '>'} {threshold}, but this call has length "
                        f"{model.seq_len} (max position id + 1): the switch at {threshold} is missing or "
                        "reads another length", basis=basis, t=t0, seq_len=model.seq_len)
                return

    # another base
    if variant.rule == "geometric" and logs_ok.any():
        r_index = A.cols[logs_ok].astype(np.float64)
        d_now = variant.freq_denominator
        positive = r_index > 0
        if positive.any():
            b_all = np.exp(-np.log(est[logs_ok][positive]) * d_now / (2 * r_index[positive]))
            b_hat = float(np.median(b_all))
            for value in dict.fromkeys([float(round(b_hat)), float(f"{b_hat:.6g}"), b_hat]):
                if value <= 1:
                    continue
                trial_thetas = value ** (-2.0 * np.arange(len(model.thetas)) / d_now)
                trial = model.with_thetas(trial_thetas)
                if A.fits(A.angles_of(trial), LOOSE):
                    env = {**variant.width_env(), "seq_len": variant._length(model.seq_len)}
                    declared_base = float(variant.base.build(env))
                    text = variant.base.text
                    expected = _num(declared_base) if text == str(_num(declared_base)) else \
                        f"{text} = {_num(declared_base)}"
                    if model.seq_len is not None and variant.length_dependent and "seq_len" in text:
                        expected += f" at call length {model.seq_len}"
                    factors = variant.factors_at(model.seq_len)
                    if factors:  # the declared frequencies are base^(-2r/d) / factor_r, not a plain base
                        missing = "are missing" if np.isclose(value, declared_base, rtol=1e-6) else "are missing too"
                        ctx.add("frequency", f"base {expected}, pair r divided by the config's factor r "
                                f"({_num(float(factors[0]))}, {_num(float(factors[1]))}, ...)",
                                f"base {_num(value)}, no per-pair factors",
                                f"every frequency of pair r matches {_num(value)}^(-2r/{d_now}): the per-pair "
                                f"divisors (LongRoPE's short_factor / long_factor) {missing}",
                                basis=basis, t=t0, base=_num(value))
                        return
                    ctx.add("frequency", f"base {expected}", f"base {_num(value)}",
                            f"base {_num(value)} where the model says {expected}: every frequency of pair r "
                            f"matches {_num(value)}^(-2r/{d_now})", basis=basis, t=t0, base=_num(value))
                    return

    # angles computed in low precision (possibly with a position offset or a flipped sign as well)
    for sign, k in [(1, 0)] + [(s, k) for s in (1, -1) for k in candidates] + [(-1, 0)]:
        gm = model.transform(positions.astype(np.float64) + model.offset + k) * model.sign * sign
        for fmt in ("float16", "bfloat16"):
            rnd = _rounder(fmt)
            simulations = {
                "positions and frequencies rounded, product rounded": rnd(rnd(gm)[:, None] * rnd(thetas)[None, :]),
                "angles rounded": rnd(gm[:, None] * thetas[None, :]),
                "positions rounded": rnd(gm)[:, None] * thetas[None, :],
                "frequencies rounded": gm[:, None] * rnd(thetas)[None, :],
            }
            for how, sim in simulations.items():
                if A.fits(sim, LOOSE, _SLACK[fmt]):
                    if k == 0 and sign == 1:
                        _add_precision(ctx, A, fmt, how)
                    else:
                        exact = dataclasses.replace(model, sign=model.sign * sign, offset=model.offset + k)
                        if k:
                            _add_offset(ctx, A, k, 1, basis, t0)
                        if sign == -1:
                            ctx.add("direction", "rotation by +m*theta", "rotation by -m*theta",
                                    "every pair turns the other way (the sign of sin is flipped)", basis=basis, t=t0)
                        _add_precision(ctx, _Angles(ctx, exact, A.n, _mask(A)), fmt, how)
                    return

    # values (cos and sin, or the outputs) rounded to a low precision: errors that do not grow with position
    for fmt in ("float16", "bfloat16"):
        if A.fits(A.base, LOOSE, _SLACK[fmt]):
            residual = np.abs(A.residual(A.base))
            t, k = (int(v) for v in np.argwhere(residual > A.tolerance(A.base))[0])
            ctx.add("precision", "values computed in float32 or float64", f"values rounded to {fmt}",
                    f"angle errors up to {_num(residual.max(), 3)} rad that do not grow with position: cos/sin "
                    f"(or the outputs) are rounded to {fmt}", basis=A.basis_of(k), t=t, format=fmt,
                    max_angle_error=_num(residual.max(), 4))
            return

    # pair by pair: a frequency per pair explains the angles
    if np.isfinite(est).all():
        trial = A.base * 0 + g[:, None] * est[None, :]
        if A.fits(trial, LOOSE):
            residual = np.abs(A.residual(A.base)) > A.tolerance(A.base)
            differing = np.flatnonzero(residual.any(axis=0))
            listed = [{"pair": int(A.cols[k]), "coordinates": list(ctx.structure.pairs[int(A.cols[k])]),
                       "expected": _num(thetas[k], 9), "found": _num(est[k], 9)} for k in differing[:8]]
            ctx.add("frequency", [x["expected"] for x in listed], [x["found"] for x in listed],
                    f"{len(differing)} pair(s) rotate at other frequencies, pair {listed[0]['pair']}: "
                    f"{listed[0]['found']} where the model says {listed[0]['expected']} (rad per position)",
                    basis=basis, t=t0, pairs=listed)
            return

    # errors within a low-precision envelope that grow with position
    residual = np.abs(A.residual(A.base))
    small = positions <= _SMALL_POSITION
    for fmt in ("float16", "bfloat16"):
        envelope = LOOSE * A.tolerance(A.base) + 4 * _UNIT[fmt] * np.abs(A.base) + _SLACK[fmt]
        if np.all(residual <= envelope) and residual[~small].max() > 2 * residual[small].max():
            _add_precision(ctx, A, fmt, "error within that format's round-off")
            return

    listed = [{"pair": int(A.cols[k]), "coordinates": list(ctx.structure.pairs[int(A.cols[k])]),
               "expected": _num(thetas[k], 9), "found": _num(est[k], 9) if np.isfinite(est[k]) else None}
              for k in np.flatnonzero((residual > A.tolerance(A.base)).any(axis=0))[:8]]
    ctx.add("frequency", [x["expected"] for x in listed], [x["found"] for x in listed],
            f"the angles of {len(listed)}+ pair(s) follow no single rule the auditor knows (largest error "
            f"{_num(residual.max(), 3)} rad); measured frequencies are listed per pair", basis=basis, t=t0,
            pairs=listed)


def _add_offset(ctx: _Context, A: _Angles, k: int, sign: int, basis: int, t0: int) -> None:
    t = int(np.argmin(ctx.positions)) if A.phi[0].any() else t0
    first = "first token at 0"
    ctx.add("position_offset", f"angle m*theta at position m ({first})", f"angle (m{k:+d})*theta",
            f"the function rotates position m by the angle of position m{k:+d}: positions counted from {k} "
            "(e.g. position ids starting at 1, or an off-by-one cache offset)", basis=basis, t=t, offset=k)
    if sign == -1:
        ctx.add("direction", "rotation by +m*theta", "rotation by -(m+offset)*theta",
                "the rotation also turns the other way (the sign of sin is flipped)", basis=basis, t=t0)


def _rounder(fmt: str):
    if fmt == "float16":
        return lambda v: np.asarray(v, dtype=np.float64).astype(np.float16).astype(np.float64)
    return lambda v: round_to_bfloat16(np.asarray(v, dtype=np.float64)).astype(np.float64)


def _add_precision(ctx: _Context, A: _Angles, fmt: str, how: str) -> None:
    residual = np.abs(A.residual(A.base))
    small = ctx.positions <= _SMALL_POSITION
    bad = residual > A.tolerance(A.base)
    t_max, k_max = (int(v) for v in np.unravel_index(np.argmax(residual), residual.shape))
    t, k = (int(v) for v in np.argwhere(bad)[0]) if bad.any() else (t_max, k_max)
    ctx.add("precision", "angles computed in float32 or float64", f"angles computed in {fmt} ({how})",
            f"angle errors grow with position beyond float32 round-off: at most {_num(residual[small].max(), 3)} rad "
            f"up to position {_SMALL_POSITION}, {_num(residual[t_max, k_max], 3)} rad at position "
            f"{int(ctx.positions[t_max])} (pair {int(A.cols[k_max])}); compute the angles in float32 at least",
            basis=A.basis_of(k), t=t, format=fmt, max_angle_error=_num(residual.max(), 4))


# -- entry point ----------------------------------------------------------------------------------


def analyse(model: Model, found: np.ndarray, expected: np.ndarray, positions: np.ndarray,
            structure: Structure, explain: bool = True) -> Analysis:
    """Align the structure with ``model`` and (when ``explain``) name every difference."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _analyse(model, found, expected, positions, structure, explain)


def _analyse(model, found, expected, positions, structure, explain) -> Analysis:
    ctx = _Context(model, found, expected, positions, structure)
    aligned = _check_rotary_dim(ctx, model)
    if aligned is not None:
        aligned = _check_pairing(ctx, aligned)
    n = 0 if aligned is None else min(len(structure.pairs), len(aligned.thetas))
    rotating = _check_blocks(ctx, n) if n else np.zeros(0, dtype=bool)
    if aligned is not None and n:
        aligned = _check_scaling(ctx, aligned, n, rotating)
    if aligned is not None and n and aligned.variant.standard_block:
        residual = wrap(structure.angle[:, :n] - aligned.angles(positions)[:, :n])
        tolerance = ANGLE_ATOL + ANGLE_REL * np.abs(aligned.angles(positions)[:, :n])
        if explain:
            _angle_differences(ctx, aligned, n, rotating)
    else:
        residual = tolerance = np.zeros((len(positions), 0))
    if explain and not ctx.differences:
        _unexplained(ctx, model)
    return Analysis(structure, ctx.differences if explain else [], positions, residual, tolerance,
                    list(structure.pairs[:n]))


def fallback_differences(model: Model, found, expected, positions, structure, note: str) -> list:
    """The worst entry as it is, when the diagnosis itself could not run (``note`` says why)."""
    ctx = _Context(model, found, expected, positions, structure)
    _unexplained(ctx, model)
    ctx.differences[0].detail += f" (the diagnosis stopped: {note})"
    return ctx.differences


def _unexplained(ctx: _Context, model: Model) -> None:
    """The verdict is `differs` but no rule above names why: report the worst entry as it is."""
    gap = np.abs(ctx.found - ctx.expected)
    t, i, j = (int(v) for v in np.unravel_index(np.argmax(gap), gap.shape))
    rotated = {c for p in model.pairs for c in p}
    what = "frequency" if j in rotated else "scaling"
    ctx.add(what, _num(ctx.expected[t, i, j], 9), _num(ctx.found[t, i, j], 9),
            f"output coordinate {i} of e_{j} at position {int(ctx.positions[t])} is {_num(ctx.found[t, i, j], 9)} "
            f"where the model gives {_num(ctx.expected[t, i, j], 9)}", basis=j, t=t)
