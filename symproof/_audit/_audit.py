"""``symproof.audit(fn, like)``: is the user's rotary map the declared one?

The function is probed with every basis vector ``e_j`` at the positions of
:data:`POSITIONS` (float64 inputs); its images ``F(m)`` are the matrix of the
map at each position when the map is linear, which is checked first (the
images must predict the outputs for random vectors, their multiples and
sums, and zero must map to zero).  The verdict compares ``F(m)`` with the
declared variant's own kernel, entry by entry, with a tolerance that allows
float32 angle arithmetic (``ANGLE_ATOL + ANGLE_REL * |angle|`` per pair):

- ``equivalent``: every entry matches;
- ``equivalent_after_relayout``: ``F(m) = P E(m) P^T`` with ``P`` the pairing
  permutation, i.e. the function is the model once ``Wq``/``Wk`` are re-laid
  by :func:`symproof.relayout_pairing` (claim ``rope.pairing_permutation``);
- ``differs``: otherwise, with every difference named (:mod:`._diagnose`).

Longer than 600 lines: the audit's result, its verdict and the probes it runs are one sequence
(probe, compare, re-layout, diagnose) that reads top to bottom.
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .._ground import _display
from .._ground._errors import InvalidInputError
from ..encodings import pairing_permutation
from ..variants import Variant, build_kernel
from ._diagnose import ANGLE_ATOL, ANGLE_REL, Analysis, Difference, analyse, fallback_differences
from .._ground._text import printable
from ..models._json import read_config as read_config_json
from ..models._config import parse_model
from ._load import MAX_AUDIT_WIDTH, Reading, load_like, model_reading
from ._model import Model
from ._child import WARMUP_FACTOR
from ._probe import PROBE_SECONDS, Probe
from ._structure import recover_structure
from ._axes import AxesModel, audit_axes, axes_model

__all__ = ["audit", "AuditResult", "POSITIONS", "VERDICTS", "MAX_AUDIT_WIDTH", "ENTRY_ATOL"]

#: probed positions: small ones (offsets, frequencies) and large odd ones (float16 cannot hold 4095, bfloat16 257)
POSITIONS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 31, 64, 100, 257, 1000, 4095, 10007, 32767)
VERDICTS = ("equivalent", "equivalent_after_relayout", "differs")
#: an entry of F(m) matches when within ENTRY_ATOL + the pair's angle tolerance (times its scale)
ENTRY_ATOL = 1e-5
#: longest call length --seq-len accepts (the largest length a variant's [length] rule accepts)
MAX_SEQ_LEN = 2**31
#: the linearity check accepts this relative deviation (low-precision arithmetic stays well inside)
LINEARITY_REL = 1e-2
_OTHER = {"adjacent": "half", "half": "adjacent"}
#: the --layout choices (the runner's layouts a user may force)
LAYOUT_CHOICES = ("td", "bthd", "bhtd", "tbhd", "flat")
#: the --dtype choices: the element type the model runs in
DTYPE_CHOICES = ("float64", "float32", "float16", "bfloat16")
#: with --dtype float16/bfloat16 the outputs are rounded to that format: entries may be off by this much more
#: (four units of round-off: x*cos + rotate(x)*sin rounds each product and the sum)
VALUE_ROUNDING = {"float16": 4 * 2.0 ** -11, "bfloat16": 4 * 2.0 ** -8}
#: the most bytes one (T, d, d) array of images may take (several exist at once); wide heads probe fewer positions
IMAGE_BYTES = 128 * 2**20
MIN_POSITIONS = 4
#: the longest call the stateful check makes (a call after which an identical probe call is repeated)
STATE_PROBE_LENGTH = 1 << 16
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass
class AuditResult:
    """What :func:`audit` found; ``as_dict()`` is the ``--json`` document."""

    verdict: str
    variant: Variant
    function: str
    backend: str | None
    layout: str | None
    max_error: float | None
    max_angle_error: dict | None
    differences: list = field(default_factory=list)
    relayout: dict | None = None
    analysis: Analysis | None = None
    seconds: float = 0.0
    probe_calls: int = 0
    positions: tuple = POSITIONS
    seq_len: int | None = None  # the call length audited (None: every probed position in one call, any length)
    convention: dict | None = None  # how the code was called (the runner's row, layout, what it built)
    range_note: str | None = None  # why fewer positions were probed (a table shorter than the probes)
    key: dict | None = None  # the key output's own audit, for code returning (q, k)
    regime: str | None = None  # the config's rotary regime audited (a model whose layers use several)
    #: the HF layer type a module taking ``layer_type`` was called with, when a regime spans several
    layer_type: str | None = None
    other_regimes: tuple = ()  # the audits of the config's further regimes (or layer types): one plain command
    own_verdict: str | None = None  # this part's verdict, when ``verdict`` is the worst of several parts'
    axes: dict | None = None  # a multi-axis audit: the model's axes, the probed position vectors (._axes)
    note: str | None = None  # how the model was read when that is not plain (M-RoPE audited on text positions)
    #: the model's order and the code's, for a model that writes its rotated block out permuted, as DeepSeek-V3 does
    output_order: dict | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict in ("equivalent", "equivalent_after_relayout") else 1

    @property
    def equivalent(self) -> bool:
        return self.exit_code == 0

    def _repr_html_(self) -> str:
        """Jupyter's view: the formula, the verdict, the witness (shown by the face, see symproof._ground._display)."""
        return _display.show(self, "html")

    def _repr_markdown_(self) -> str:
        return _display.show(self, "markdown")

    def as_dict(self) -> dict:
        out = self._own_dict()
        if self.other_regimes:  # the verdict above is the worst of every regime's (or layer type's)
            out["regimes"] = {}
            for r in (self, *self.other_regimes):
                own = r._own_dict()
                own["verdict"] = r.own_verdict or r.verdict
                own["exit_code"] = 0 if own["verdict"] in ("equivalent", "equivalent_after_relayout") else 1
                out["regimes"][self._part_label(r)] = own
        return out

    def _part_label(self, part: "AuditResult") -> str:
        """A part's name: its regime, with its layer type when the regime was audited once per layer type."""
        parts = (self, *self.other_regimes)
        shared = sum(p.regime == part.regime for p in parts) > 1
        if shared and part.layer_type:
            return f"{part.regime} ({part.layer_type})" if part.regime is not None else part.layer_type
        return str(part.regime)

    def _own_dict(self) -> dict:
        out = {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "function": self.function,
            "like": self.variant.describe(),
            "head_dim": self.variant.width,
            "array_library": self.backend,
            "convention": self.convention,
            "positions_passed_as": (self.convention or {}).get("positions") if self.axes else
            {"full": "x.shape[:-1]", "shared": "(T,)", "contiguous": "a start offset",
             "scalar": "one position per call"}.get((self.convention or {}).get("positions")),
            "positions_range_note": self.range_note,
            "left_at_default": list((self.convention or {}).get("left_at_default") or []),
            "positions_probed": [list(p) if isinstance(p, tuple) else p for p in self.positions],
            "axes": self.axes,
            "note": self.note,
            "output_order": self.output_order,
            "seq_len": self.seq_len,
            "max_error": self.max_error,
            "max_angle_error": self.max_angle_error,
            "tolerance": f"|entry error| <= {ENTRY_ATOL:g} + ({ANGLE_ATOL:g} + 2^-19 * |angle of its pair|) * "
                         "max(1, scale of its pair): float32 angle arithmetic passes",
            "relayout": self.relayout,
            "differences": [d.as_dict() for d in self.differences],
            "key": self.key,
            "probe_calls": self.probe_calls,
            "seconds": round(self.seconds, 4),
        }
        if self.analysis is not None:
            out["structure"] = self.analysis.structure.describe()
        if self.regime is not None:
            out["regime"] = self.regime
        return out

    def summary(self) -> str:
        """The text ``symproof audit`` prints without ``--json``."""
        return "\n".join(printable(line) for line in self._lines())

    def _lines(self) -> list:
        if not self.other_regimes:
            return self._regime_lines()
        parts = (self, *self.other_regimes)
        regimes = len({p.regime for p in parts})
        if regimes == 1:
            regime = f" of the regime {self.regime}" if self.regime is not None else ""
            head = (f"{len(parts)} layer types{regime} (one rotary map, HF's module called once per layer type)")
        else:
            head = f"{regimes} rotary regimes of the config"
        lines = [f"{head}, each audited through the code's layer_type: verdict {self.verdict.replace('_', ' ')} "
                 "(the worst of them)"]
        for result in parts:
            lines.append(f"-- regime {self._part_label(result)}" if regimes > 1
                         else f"-- layer type {result.layer_type}")
            lines += result._regime_lines()
        return lines

    def _regime_lines(self) -> list:
        v = self.variant
        lines = [f"{self.function} vs {v.title} ({v.source}; width {v.width}, rotated {v.rotated_width}, "
                 f"{v.pairing} pairing)"]
        if self.convention:
            c = self.convention
            lines.append(f"called as {c.get('call')} [{c.get('name')}; layout {c.get('layout_shape')}, "
                         f"positions {c.get('positions')}]")
            if c.get("note"):
                lines.append(c["note"])
            if c.get("left_at_default"):
                lines.append(f"left at its default: {', '.join(c['left_at_default'])}")
        calls = f"{self.probe_calls} call{'s' if self.probe_calls != 1 else ''}, {self.seconds:.2f} s"
        if self.note:
            lines.append(self.note)
        if self.output_order:
            lines.append(self.output_order["said"])
        if self.axes:
            lines.append(self.axes["model"])
            lines.append(f"probed with {self.backend} inputs at {len(self.positions)} position vectors (0; each axis "
                         f"alone at 1..{self.axes['largest']}; {self.axes['mixed']} mixed), {calls}")
        else:
            lines.append(f"probed with {self.backend} inputs at {len(self.positions)} positions "
                         f"(0..{self.positions[-1]}), {calls}")
        if self.range_note:
            lines.append(self.range_note)
        if self.key and self.key.get("note"):
            lines.append(f"key output: {self.key['note']}")
        if v.length_dependent:
            regime = "short" if self.seq_len <= v.length_threshold else "long"
            lines.append(f"frequencies depend on the call length: audited as calls of length {self.seq_len} "
                         f"(max position id + 1; the {regime} regime, threshold {v.length_threshold}); "
                         "--seq-len N audits another length")
        verdict = self.own_verdict or self.verdict
        if verdict == "equivalent":
            lines.append(f"verdict: equivalent (max entry error {self.max_error:.3g}"
                         + self._angle_text() + ")")
        elif verdict == "equivalent_after_relayout":
            lines.append(f"verdict: equivalent after re-laying the weights (max entry error {self.max_error:.3g}"
                         + self._angle_text() + ")")
            lines.append(f"  {self.relayout['call']}")
            lines.append(f"  applied to {self.relayout['applies_to']}")
        else:
            lines.append(f"verdict: differs ({len(self.differences)} difference(s))")
            for d in self.differences:
                lines.append(f"  {d.what}: expected {_short(d.expected)}, found {_short(d.found)}")
                lines.append(f"    {d.detail}")
                if d.basis is not None:
                    lines.append(f"    shown by: x = e_{d.basis} at position {d.position}: expected "
                                 f"{_short(d.expected_output)}, got {_short(d.found_output)}")
                elif d.extra.get("input"):
                    lines.append(f"    shown by: {d.extra['input']}")
                if d.extra.get("fix"):
                    lines.append(f"    fix: {d.extra['fix']}")
        return lines

    def _angle_text(self) -> str:
        a = self.max_angle_error
        if not a:
            return ""
        return f", max angle error {a['radians']:.3g} rad at position {a['position']}"


def _short(value, limit: int = 160) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def audit_positions(variant: Variant, seq_len: int | None = None) -> tuple:
    """``(positions, seq_len)``: what one audit probes, every call carrying all the positions.

    A rule that reads the call length (dynamic NTK, LongRoPE) is one map per call length, so the audit
    compares one of them: by default the longest call of the short regime (``seq_len`` = the threshold),
    else ``seq_len``.  The positions are then those of :data:`POSITIONS` below ``seq_len`` and
    ``seq_len - 1`` itself, so that each call's largest position id + 1 is exactly ``seq_len``.
    """
    if seq_len is not None:
        if isinstance(seq_len, bool) or not isinstance(seq_len, (int, np.integer)) or not 2 <= seq_len <= MAX_SEQ_LEN:
            raise InvalidInputError(f"--seq-len must be an integer from 2 to {MAX_SEQ_LEN} (the call length, max "
                                    f"position id + 1), got {seq_len!r}")
        seq_len = int(seq_len)
    elif variant.length_dependent:
        seq_len = variant.length_threshold
    if seq_len is None:
        last = variant.last_position  # a declared range 0..N: its positions only (the kernel refuses others)
        return (POSITIONS if last is None else tuple(dict.fromkeys([p for p in POSITIONS if p <= last] + [last]))), None
    return tuple(p for p in POSITIONS if p < seq_len - 1) + (seq_len - 1,), seq_len


def _declared_images(variant: Variant, model: Model, positions: np.ndarray) -> np.ndarray:
    """The declared map's matrix at every position: from the exact frequencies (standard rotation blocks),
    or from the variant's generated kernel (a block of its own)."""
    if variant.standard_block:
        return model.images(positions)
    d = variant.width
    basis = np.broadcast_to(np.eye(d)[:, None, :], (d, len(positions), d))
    out = build_kernel(variant).apply(basis, positions.astype(np.float64), side="query", seq_len=model.seq_len)
    return np.transpose(out, (1, 2, 0))  # (T, i, j)


def _column_tolerance(model: Model, positions: np.ndarray, values: float = 0.0) -> np.ndarray:
    """``(T, d)``: how far each entry of column j may be off (its pair's angle tolerance times its scale, plus
    ``values``: the rounding of outputs computed in the deployment dtype)."""
    d = model.variant.width
    tol = np.full((len(positions), d), ENTRY_ATOL + values)
    angles = np.abs(model.angles(positions))
    scales = np.abs(model.scales(positions))
    for r, (a, b) in enumerate(model.pairs):
        extra = (ANGLE_ATOL + ANGLE_REL * angles[:, r]) * np.maximum(scales[:, r], 1.0)
        tol[:, a] += extra
        tol[:, b] += extra
    return tol


def _matches(found, expected, tol) -> bool:
    # one position at a time: a (T, d, d) temporary is 32 MB per position at d = 2048
    return all(bool(np.all(np.abs(found[t] - expected[t]) <= tol[t][None, :])) for t in range(len(found)))


def _max_error(found, expected) -> float:
    return max((float(np.abs(found[t] - expected[t]).max()) for t in range(len(found))), default=0.0)


def _linearity_inputs(d: int, n: int) -> np.ndarray:
    """Random vectors, a multiple, a sum and zero: a linear map's basis images predict all of them."""
    rng = np.random.default_rng(20261201)
    x = rng.standard_normal((2, n, d))
    y = rng.standard_normal((2, n, d))
    return np.concatenate([x, -2.5 * x, x + y, np.zeros((1, n, d))])


def _linearity(probe: Probe, images: np.ndarray, positions: np.ndarray, inputs: np.ndarray,
               outputs: np.ndarray, rel: float = LINEARITY_REL) -> Difference | None:
    """``None`` when the images predict the outputs of other inputs; otherwise a ``nonlinear`` difference."""
    d, n = probe.width, len(positions)

    def predicted(z):
        return np.matmul(images[None], z[..., None])[..., 0]

    def off(z, out):
        scale = np.abs(z).max(axis=-1, keepdims=True) * max(1.0, float(np.abs(images).max())) + 1.0
        return np.abs(out - predicted(z)) / scale

    if not np.isfinite(outputs).all():
        b, t = (int(v) for v in np.argwhere(~np.isfinite(outputs))[0][:2])
        raise InvalidInputError(f"{probe.name} returned a non-finite value for a random input at position "
                                f"{int(positions[t])}; expected finite numbers")
    if off(inputs, outputs).max() <= rel:
        return None
    # a minimal witness: zero, then 2 e_j, then e_j + e_k
    zero_out = outputs[-1]
    if np.abs(zero_out).max() > rel:
        t, i = (int(v) for v in np.unravel_index(np.argmax(np.abs(zero_out)), zero_out.shape))
        return Difference("nonlinear", "T(0) = 0 (a linear map)", f"T(0) has coordinate {i} = {zero_out[t, i]:.6g}",
                          f"the zero vector is not mapped to zero at position {int(positions[t])}: the map adds "
                          "something that does not depend on x", extra={"input": {"x": "0", "position": int(positions[t])}})
    for c in (2.0, -1.0, 0.5):
        z = np.broadcast_to(c * np.eye(d)[:, None, :], (d, n, d))
        out = probe(np.array(z), positions, repeat=False)[0]
        if not np.isfinite(out).all():
            continue
        gap = off(z, out)
        if gap.max() > rel:
            j, t, i = (int(v) for v in np.unravel_index(np.argmax(gap), gap.shape))
            return _nonlinear_witness(f"{c:g} * e_{j}", out[j, t], predicted(z)[j, t], positions[t],
                                      f"T({c:g} x) != {c:g} T(x) for x = e_{j}", basis=j)
    pairs = np.zeros((d - 1, n, d))
    pairs[:, :, 0] = 1.0
    pairs[np.arange(d - 1), :, np.arange(1, d)] = 1.0
    out = probe(pairs, positions, repeat=False)[0]
    gap = off(pairs, out)
    if gap.max() > rel:
        k, t, i = (int(v) for v in np.unravel_index(np.argmax(gap), gap.shape))
        return _nonlinear_witness(f"e_0 + e_{k + 1}", out[k, t], predicted(pairs)[k, t], positions[t],
                                  f"T(e_0 + e_{k + 1}) != T(e_0) + T(e_{k + 1})", basis=[0, k + 1])
    gap = off(inputs, outputs)
    b, t, i = (int(v) for v in np.unravel_index(np.argmax(gap), gap.shape))
    return _nonlinear_witness(f"a random normal vector (seed 20261201, row {b})", outputs[b, t],
                              predicted(inputs)[b, t], positions[t], "superposition fails for random inputs")


def _nonlinear_witness(x_text, got, want, position, what, basis=None) -> Difference:
    k = int(np.argmax(np.abs(got - want)))
    shown = {"x": x_text, "position": int(position)}
    if basis is not None:
        shown["basis"] = basis
    return Difference("nonlinear", "a linear map: T(a x + b y) = a T(x) + b T(y)",
                      f"coordinate {k} is {got[k]:.6g} where linearity predicts {want[k]:.6g}",
                      f"{what} at position {int(position)}: the function is not linear in x, so it is no "
                      "rotation of x", extra={"input": shown})


def _max_angle(analysis: Analysis, positions) -> dict | None:
    res = np.abs(analysis.residual)
    if res.size == 0:
        return None
    t, k = (int(v) for v in np.unravel_index(np.argmax(res), res.shape))
    return {"radians": float(res[t, k]), "position": int(positions[t]), "pair": k,
            "coordinates": list(analysis.pairs[k])}


def hints_of(variant: Variant, config: dict | None) -> dict:
    """What the user's modules and tables are built from (a config's keys, or the variant's numbers)."""
    base = None
    if variant.rule == "geometric" and variant.base is not None:
        try:
            base = float(variant.base.build({**variant.width_env(), "seq_len": variant._length(None)}))
        except Exception:  # noqa: BLE001 - a base that needs more than the widths: the builders' default
            base = None
    max_position, factor = None, None
    whole = config  # modules are built from the config as transformers reads it (the runner's _build_config)
    if isinstance(config, dict) and isinstance(config.get("text_config"), dict):
        # a multimodal config (Qwen2-VL, Gemma 3, Llama 4): the text model's values are under text_config
        config = {**{k: v for k, v in config.items() if k != "text_config"}, **config["text_config"]}
    if isinstance(config, dict):
        value = config.get("max_position_embeddings", config.get("n_positions"))
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            max_position = value
        scaling = config.get("rope_scaling") or config.get("rope_parameters") or {}
        if isinstance(scaling, dict) and isinstance(scaling.get("factor"), (int, float)):
            factor = float(scaling["factor"])
    elif variant.length_dependent:  # a length rule: its threshold is the model's trained length
        max_position = variant.length_threshold
    if factor is None and variant.params.get("s") is not None:
        try:
            factor = float(variant.params["s"])
        except (TypeError, ValueError):
            factor = None
    if base is None and isinstance(config, dict) and variant.params.get("theta") is not None:
        base = _number(variant.params["theta"])  # a config's rope_theta, whatever its scaling rule
    rope = rope_values(variant, config)
    if factor is None and rope.get("factor") is not None:
        factor = rope["factor"]
    return {"head_dim": variant.width, "rotated_dim": variant.rotated_width, "pairing": variant.pairing,
            "base": base, "max_position": max_position, "scaling_factor": factor,
            "config": dict(whole) if isinstance(whole, dict) else None, "rope": rope}


#: a config variant's parameters by the role the user's code names them with (the runner's ``_ROPE_ROLES``)
_PARAM_ROLES = {"factor": "factor", "low_freq_factor": "low_freq_factor", "high_freq_factor": "high_freq_factor",
                "L0": "original_max_position", "beta_fast": "beta_fast", "beta_slow": "beta_slow",
                "mscale": "mscale", "mscale_all_dim": "mscale_all_dim"}
#: the HF rope_scaling keys of those roles, and the other names real code reads them under (litgpt)
_SCALING_KEYS = {"factor": ("factor",), "low_freq_factor": ("low_freq_factor",),
                 "high_freq_factor": ("high_freq_factor",),
                 "original_max_position": ("original_max_position_embeddings", "original_max_seq_len"),
                 "beta_fast": ("beta_fast",), "beta_slow": ("beta_slow",), "mscale": ("mscale",),
                 "mscale_all_dim": ("mscale_all_dim",), "short_factor": ("short_factor",),
                 "long_factor": ("long_factor",)}
_ROPE_TYPE = re.compile(r"rope_type (\w+)")


def _number(value):
    number = float(value)
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def rope_values(variant: Variant, config: dict | None) -> dict:
    """The model's rope values by role, for filling the parameters of the user's code: the rule
    (``rope_type``), whether it scales, each parameter of the rule, and the rule as an HF-style
    ``rope_scaling`` dict.  ``known`` is False when the rule is a variant file's own formula: then only
    the values it names are known."""
    rule = None
    if isinstance(config, dict):
        found = _ROPE_TYPE.search(variant.title or "")
        rule = found.group(1) if found else None
    elif variant.rule == "geometric" and not variant.length_dependent and not variant.frequency_factors:
        rule = "default"
    # a variant file's own formula scales when it reads the call length, divides pairs, or names a factor
    scaled = rule not in (None, "default") or (rule is None and bool(
        variant.length_dependent or variant.frequency_factors or set(variant.params) & {"s", "factor", "scale"}))
    out: dict = {"known": rule is not None, "rule": rule, "scaled": scaled}
    for key, role in _PARAM_ROLES.items():
        if rule is not None and variant.params.get(key) is not None:
            try:
                out[role] = _number(variant.params[key])
            except (TypeError, ValueError):
                continue
    if rule is not None:
        out["linear_factor"] = out.get("factor", 1) if rule == "linear" else 1
    if rule == "proportional" and variant.params.get("proportion") is not None:
        # the partial factor counts turning pairs of the whole head, not the rotated width
        out["proportion"] = _number(variant.params["proportion"])
    if rule == "longrope":  # the per-pair divisors of each regime (lists in the config)
        out["short_factor"] = [_number(f) for f in variant.frequency_factors]
        out["long_factor"] = [_number(f) for f in (variant.long_factors or variant.frequency_factors)]
        # the scale of cos and sin (both regimes): the config's attention_factor, else HF's default
        given = _scaling_table(config).get("attention_factor")
        factor, original = out.get("factor"), out.get("original_max_position")
        if isinstance(given, (int, float)) and not isinstance(given, bool):
            out["longrope_mscale"] = float(given)
        elif factor is not None and original:
            out["longrope_mscale"] = math.sqrt(1 + math.log(factor) / math.log(original)) if factor > 1 else 1.0
    if rule == "yarn":
        out.update(extrapolation_factor=1, length_is_original=True)
        rope_table = (config or {}).get("rope_scaling") or (config or {}).get("rope_parameters") or {}
        if isinstance(rope_table, dict) and rope_table.get("attention_factor") is None:
            out["attn_factor"] = 1  # vLLM's extra factor on top of YaRN's own mscale: none in HF's rule
    if out["scaled"]:
        shown = ", ".join(f"{_SCALING_KEYS[k][0]} {out[k]:g}" for k in (
            "factor", "low_freq_factor", "high_freq_factor", "original_max_position", "beta_fast", "beta_slow")
            if out.get(k) is not None)
        out["description"] = (f"rope_type {rule}" + (f" ({shown})" if shown else "") if rule
                              else f"the frequency rule of {variant.title or variant.name}")
    if rule not in (None, "default"):
        table = {"rope_type": rule, "type": rule}
        for role, keys in _SCALING_KEYS.items():
            if out.get(role) is not None:
                table.update({key: out[role] for key in keys})
        out["rope_scaling"] = table
    return out


def _scaling_table(config) -> dict:
    """A config's rope scaling table (``rope_scaling`` or ``rope_parameters``, its text model's if multimodal)."""
    if not isinstance(config, dict):
        return {}
    if isinstance(config.get("text_config"), dict):
        config = {**config, **config["text_config"]}
    table = config.get("rope_scaling") or config.get("rope_parameters") or {}
    return table if isinstance(table, dict) else {}


def layer_types_of(config: dict | None, regime: str | None) -> tuple:
    """The HF layer types (``config.layer_types``) whose layers use ``regime``, in the order they first appear:
    ``()`` when none can be named (no config, no regime named and several, a layer list that does not match the
    layers read); a config whose regimes are named by no layer list gives the regime's own name."""
    if config is None:
        return ()
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    declared = text.get("layer_types")
    if not isinstance(declared, list):
        # the regimes are named by no layer list: a module taking layer_type gets the name itself
        return (regime,) if regime is not None else ()
    model = parse_model(config, "<config>")
    if regime is None:
        if len(model.regimes) != 1:
            return ()
        regime = model.regimes[0].name
    tables = _scaling_table(config)
    rotary = [t for t in declared if isinstance(t, str) and isinstance(tables.get(t), dict)]
    # layer_types may list more than the attention layers (Dory: one mlp entry after each): the entries that
    # have a rope table, in order, are then the layers the model reads, when they are as many
    for listed in (declared, rotary):
        if len(listed) == len(model.layer_regimes):
            types = tuple(dict.fromkeys(t for t, r in zip(listed, model.layer_regimes) if r == regime))
            return types if all(isinstance(t, str) for t in types) else ()
    return (regime,) if regime in model.names else ()


def layer_type_of(config: dict | None, regime: str | None) -> str | None:
    """The one HF layer type whose layers use ``regime``, else ``None`` (see :func:`layer_types_of`)."""
    types = layer_types_of(config, regime)
    return types[0] if len(types) == 1 else None


def _config_of(like) -> dict | None:
    if isinstance(like, Mapping):
        return dict(like)
    if isinstance(like, (str, os.PathLike)) and os.fspath(like).endswith(".json"):
        data = read_config_json(os.fspath(like))
        return dict(data) if isinstance(data, Mapping) else None
    return None


def _compare(variant: Variant, model: Model, found: np.ndarray, expected: np.ndarray, tol: np.ndarray,
             positions: np.ndarray, nonlinear) -> tuple:
    """``(verdict, max_error, relayout, analysis, differences, max_angle)`` of the images ``found``."""
    verdict, relayout, analysis, differences, max_angle = "differs", None, None, [], None
    max_error = _max_error(found, expected)
    if nonlinear is not None:
        return verdict, max_error, None, None, [nonlinear], None
    if _matches(found, expected, tol):
        verdict = "equivalent"
    else:
        other = _OTHER.get(variant.pairing)
        if other and variant.rotated_width == variant.width:
            q = pairing_permutation(variant.width, variant.pairing, other)
            relaid = expected[:, q][:, :, q]
            if _matches(found, relaid, tol[:, q]):
                verdict = "equivalent_after_relayout"
                max_error = _max_error(found, relaid)
                relayout = {
                    "call": f"relayout_pairing(w, n_heads, src={variant.pairing!r}, dst={other!r})",
                    "applies_to": "the query and key projections Wq, Wk (and their biases), not Wv or Wo",
                    "permutation": q,
                    "why": f"the function rotates {other} pairs where the model rotates {variant.pairing} ones; "
                           "with the re-laid weights it computes the model's scores exactly "
                           "(claim rope.pairing_permutation)",
                }
    still = [tuple(p) for p, w in zip(model.pairs, model.thetas) if w == 0]
    structure = recover_structure(found, still=still)
    try:
        analysis = analyse(model, found, expected, positions, structure, explain=verdict == "differs")
    except Exception:  # noqa: BLE001 - the verdict stands without its explanation; no internal text shown
        note = "no rule of the diagnosis applies to these images; the worst entry is shown as it is"
        if verdict == "differs":
            differences = fallback_differences(model, found, expected, positions, structure, note)
    else:
        differences = analysis.differences
        max_angle = _max_angle(analysis, positions)
    return verdict, max_error, relayout, analysis, differences, max_angle


_WORSE = {"equivalent": 0, "equivalent_after_relayout": 1, "differs": 2}


def audit(fn: Any, like: Any, *, head_dim: int | None = None, seq_len: int | None = None, name: str | None = None,
          probe_seconds: float = PROBE_SECONDS, warmup_seconds: float | None = None, apply: str | None = None,
          table: str | None = None, call: str | None = None, layout: str | None = None,
          dtype: str | None = None, cast_module: bool = False, regime: str | None = None,
          layer_type: str | None = None) -> AuditResult:
    """Audit the user's rotary code ``fn`` against the declared model ``like``.

    ``fn`` is a target name, ``"FILE.py:NAME"`` or ``"package.module:NAME"``
    (NAME a function, a class or ``Class.method``), run in a child process
    with a hard time limit; or a Python object (a function, a class, an
    ``nn.Module`` instance), run in this process.  How it is called is found
    from its signature and trial calls (:data:`~._runner.CONVENTIONS`):
    ``fn(x, positions)``, ``fn(q, k, positions) -> (q, k)``, a Hugging Face
    rotary module with its ``apply(q, k, cos, sin)`` (``apply=``), a table
    builder and the function consuming it (``table=``, ``apply=``), modules
    taking ``input_pos``/``position_ids``/``offset``, vLLM's
    ``forward_native(positions, query, key)``; ``call`` is a Python
    expression in ``x`` and ``positions`` when nothing fits; ``layout`` one
    of ``td`` (default ``(..., T, D)``), ``bthd``, ``bhtd``, ``tbhd``,
    ``flat``; ``dtype`` the element type of the activations (``float16``,
    ``bfloat16``), the user's modules built as ``from_pretrained(dtype=...)`` builds
    them (torch's default dtype set to it: HF's ``inv_freq`` stays float32);
    ``cast_module`` casts the whole module to ``dtype`` (``module.to(dtype)``,
    its buffers rounded too).

    ``like`` is a :class:`~symproof.Variant`, a variant TOML path, or a model
    ``config.json`` path / dict; ``regime`` names one rotary regime of a config
    whose layers use several (Gemma 3's ``sliding_attention``), and a rotary
    module taking ``layer_type`` is called with that regime's layer type (with
    each of them, one audit per layer type, when the regime's layers have
    several, as OLMo 3's sliding and full layers share one map; ``layer_type``
    names one).  A
    multi-axis model (a variant with ``[position] axes``, a config with
    ``mrope_section``) is audited per axis (:mod:`._axes`): positions are then
    vectors ``(T, A)``.  Returns an :class:`AuditResult` whose
    ``verdict`` is one of :data:`VERDICTS`; raises
    :class:`~symproof.InvalidInputError` when the code cannot be audited (it
    raises, hangs, returns the wrong shape or NaN, or no convention fits).

    When the declared frequencies depend on the call length (``[length]`` in a
    variant file; dynamic NTK and LongRoPE configs), the audit compares calls of
    one length ``seq_len`` (max position id + 1): by default the threshold, the
    longest call before the rule changes (see :func:`audit_positions`).
    """
    start = time.perf_counter()
    if not isinstance(fn, str) and not callable(fn):
        raise InvalidInputError(f"fn must be a target name (FILE.py:NAME) or callable, got {type(fn).__name__}")
    if layout is not None and layout not in LAYOUT_CHOICES:
        raise InvalidInputError(f"--layout must be one of {', '.join(LAYOUT_CHOICES)}, got {layout!r}")
    if dtype is not None and dtype not in DTYPE_CHOICES:
        raise InvalidInputError(f"--dtype must be one of {', '.join(DTYPE_CHOICES)}, got {dtype!r}")
    for option, value in (("--apply", apply), ("--table", table)):
        if value is not None and not _DOTTED.match(str(value)):
            raise InvalidInputError(f"{option} expects a Python name defined next to the target, got {value!r}")
    if call is not None and (not isinstance(call, str) or not call.strip()):
        # an empty expression would silently mean "no --call": the conventions would be tried instead
        raise InvalidInputError(f"--call expects a Python expression in x and positions giving the rotated x "
                                f"(e.g. 'rotate(x, positions)'), got {call!r}")
    options = dict(head_dim=head_dim, seq_len=seq_len, name=name, probe_seconds=probe_seconds,
                   warmup_seconds=warmup_seconds, apply=apply, table=table, call=call, layout=layout, dtype=dtype,
                   cast_module=cast_module)
    if layer_type is not None and (not isinstance(layer_type, str) or not layer_type.strip()):
        raise InvalidInputError(f"layer_type expects the name of one of the config's layer types, got {layer_type!r}")
    if regime is None and not isinstance(like, Variant):
        rotary = rotary_regimes(like)
        if len(rotary) == 1 and rotary != (None,):
            regime = rotary[0]  # the other regimes are NoPE layers: the code's map is this one's
        elif len(rotary) > 1:
            return _audit_each_part(tuple((r, None) for r in rotary), fn, like, options)
    if layer_type is None and not isinstance(like, Variant):
        types = layer_types_of(_config_of(like), regime)
        if len(types) > 1:  # one map, several layer types (OLMo 3): a module taking layer_type is called with each
            return _audit_each_part(tuple((regime, t) for t in types), fn, like, options)
    variant = load_like(like, head_dim, regime, axes=True)
    if variant.width > MAX_AUDIT_WIDTH:
        raise InvalidInputError(f"head width {variant.width} is above {MAX_AUDIT_WIDTH}, the widest the audit probes")
    config = _config_of(like) if not isinstance(like, Variant) else None
    if isinstance(fn, str):
        label = name or fn
        fn = _resolved_target(fn)
    else:
        label = name or getattr(fn, "__qualname__", None) or type(fn).__name__
    many = axes_model(variant, config)
    if many is not None and len(variant.axes) > 1 and seq_len is not None:
        raise InvalidInputError("--seq-len applies to one position axis; a multi-axis model is probed on each axis "
                                "up to its length (or 4095)")
    probed, seq_len = audit_positions(variant, seq_len) if len(variant.axes) == 1 else ((), None)
    hints = hints_of(variant, config)
    # an explicit call length beyond the trained one (dynamic NTK's long regime): the config does not bound it
    hints["bound_by_config"] = seq_len is None or hints["max_position"] is None or seq_len <= hints["max_position"]
    hints["seq_len"] = seq_len
    hints["probe_end"] = max(probed) + 1 if probed else None
    if layer_type is not None:
        named = layer_types_of(config, regime)
        if named and layer_type not in named:
            raise InvalidInputError(f"layer_type {printable(layer_type)!s}: the layers of regime {regime} are of the "
                                    f"layer types {', '.join(named)}")
    hints["layer_type"] = layer_type if layer_type is not None else layer_type_of(config, regime)
    source = os.fspath(like) if isinstance(like, (str, os.PathLike)) else "<config>"
    reading = (model_reading(config, source, variant, head_dim, regime) if config is not None and many is None
               else Reading())
    order = reading.output_order
    hints["output_order"] = None if order is None else list(order)
    options = {"hints": hints, "apply": apply, "table": table, "call": call, "layout": layout,
               "dtype": dtype, "cast_module": bool(cast_module)}
    if isinstance(probe_seconds, bool) or not isinstance(probe_seconds, (int, float)) or not 0 < probe_seconds <= 3600:
        raise InvalidInputError(f"--timeout must be a number of seconds in (0, 3600], got {probe_seconds!r}")
    warmup = WARMUP_FACTOR * probe_seconds if warmup_seconds is None else warmup_seconds
    note = None
    if many is not None:
        try:
            return _audit_many(fn, options, many, variant, label, start, dtype, probe_seconds, warmup)
        except InvalidInputError as err:
            if len(variant.axes) > 1 or "no calling convention fits" not in str(err):
                raise
            # one position per token: on text every M-RoPE axis holds the token's position, the 1-D map
            note = (f"the code takes one position per token (no multi-axis convention fits): audited on text, every "
                    f"M-RoPE axis at the token's position ({many.source}: the sections are not exercised)")
    probe = Probe.of(fn, options, variant.width, label, seconds=probe_seconds, warmup=warmup)
    try:
        result = _audit(probe, variant, probed, seq_len, label, start, dtype, order=order)
    finally:
        probe.close()
    if reading.query_scale is not None:  # Ministral 3: the attention scales the query after this rotation
        note = "; ".join(filter(None, [note, f"HF's attention multiplies the rotated query by {reading.query_scale}: "
                                             "outside the rotary code, so not audited here (symproof check "
                                             "decides the properties with it)"]))
    result.note = note
    result.regime = regime
    return result


def _audit_many(fn, options: dict, many: AxesModel, variant: Variant, label: str, start: float, dtype,
                probe_seconds: float, warmup: float) -> AuditResult:
    """The per-axis audit (:mod:`._axes`) of code taking multi-axis positions."""
    hints = dict(options["hints"])
    sections = many.sections()
    hints["axes_dim"] = None if sections is None else [2 * n for n in sections]
    if hints.get("base") is None:  # a per-axis formula's own base parameter (its rule is not one geometric base)
        for key in ("base", "theta"):
            if variant.params.get(key) is not None:
                hints["base"] = _number(variant.params[key])
                break
    options = {**options, "hints": hints, "axes": many.count}
    probe = Probe.of(fn, options, variant.width, label, seconds=probe_seconds, warmup=warmup)
    bound = hints.get("max_position")

    def result_of(positions, info):
        out = AuditResult("differs", variant, label, probe.backend, probe.layout, None, None,
                          positions=tuple(tuple(int(v) for v in p) for p in positions))
        out.convention = info
        mixed = sum(1 for p in positions if np.count_nonzero(p) > 1)
        out.axes = {"model": many.describe(), "names": list(many.names), "axis_of_pair": list(many.axis_of_pair),
                    "largest": max(int(p.max()) for p in positions if np.count_nonzero(p) == 1), "mixed": mixed,
                    "bound": bound}
        return out

    try:
        return audit_axes(probe, many, label, start, bound, dtype, result_of)
    finally:
        probe.close()


def rotary_regimes(like) -> tuple:
    """The names of a config's regimes that rotate (``(None,)`` for anything but a several-regime config)."""
    config = _config_of(like)
    if config is None:
        return (None,)
    try:
        model = parse_model(config, os.fspath(like) if isinstance(like, (str, os.PathLike)) else "<config>")
    except Exception:  # noqa: BLE001 - load_like reports a config that cannot be read, in its own words
        return (None,)
    if len(model.regimes) == 1:
        return (None,)
    return tuple(r.name for r in model.regimes if r.variant is not None)


def _audit_each_part(parts: tuple, fn, like, options: dict) -> AuditResult:
    """One plain command for a config whose layers use several rotary maps, or one map under several layer
    types: ``parts`` are ``(regime, layer type or None)``.  Code taking ``layer_type`` (HF's per-layer-type
    module) is audited once per part, each regime with its own layer types; other code implements one map,
    which only its author can name among several regimes (``--regime``), and is the one map of a regime
    whose layer types differ in name only."""
    expanded = []
    for regime, layer_type in parts:
        types = (layer_type,) if layer_type is not None else layer_types_of(_config_of(like), regime)
        expanded += [(regime, t) for t in (types if len(types) > 1 or layer_type is not None else (None,))]
    results = []
    for regime, layer_type in expanded:
        result = audit(fn, like, regime=regime, layer_type=layer_type, **options)
        results.append(result)
        if (result.convention or {}).get("layer_type"):
            result.layer_type = layer_type
        elif len(results) == 1:
            if len({r for r, _ in expanded}) == 1:
                return result  # one regime: the code's one map is compared with it, whatever the layer types
            source = os.fspath(like) if isinstance(like, (str, os.PathLike)) else "<config>"
            names = tuple(dict.fromkeys(r for r, _ in expanded))
            raise InvalidInputError(f"{printable(source)}: the config has {len(names)} rotary regimes "
                                    f"({', '.join(names)}) and {printable(result.function)} takes no layer_type: "
                                    "pass --regime NAME, the regime this code implements")
    first, others = results[0], tuple(results[1:])
    for result in results:
        result.own_verdict = result.verdict
    first.verdict = max(results, key=lambda r: _WORSE[r.own_verdict]).own_verdict
    first.other_regimes = others
    first.seconds = sum(r.seconds for r in results)
    return first


def _resolved_target(target: str) -> str:
    """A ``FILE.py:NAME`` target with its file made absolute (the user's code may ``chdir``)."""
    if ":" in target:
        where, name = target.rsplit(":", 1)
        if where.endswith(".py"):
            if not os.path.isfile(where):
                raise InvalidInputError(f"{printable(where)}: no such file (from {printable(repr(target))})")
            return f"{os.path.abspath(where)}:{name}"
    return target


def _audit(probe: Probe, variant: Variant, probed: tuple, seq_len, label: str, start: float,
           dtype: str | None = None, cast_module: bool = False, order: tuple | None = None) -> AuditResult:
    info = probe.setup()
    probed = probe.usable_positions(probed, extend=seq_len is None)
    probed, memory_note = _within_memory(probed, variant.width)
    positions = np.array(probed, dtype=np.int64)
    inputs = _linearity_inputs(variant.width, len(positions))
    found, key_found, outputs = probe.basis_images(positions, extra=inputs)
    rounding = VALUE_ROUNDING.get(dtype, 0.0)
    nonlinear = _linearity(probe, found, positions, inputs, outputs, max(LINEARITY_REL, 8 * rounding))
    model = Model.of(variant, seq_len if variant.length_dependent else None)
    expected = _declared_images(variant, model, positions)
    tol = _column_tolerance(model, positions, rounding)
    result = AuditResult("differs", variant, label, probe.backend, probe.layout, None, None,
                         positions=probed, seq_len=seq_len)
    result.convention = info
    result.range_note = "; ".join(n for n in (probe.range_note, memory_note) if n) or None
    if order is not None:
        found, key_found, result.output_order = _in_model_order(order, found, key_found, expected, positions)
    (result.verdict, result.max_error, result.relayout, result.analysis, result.differences,
     result.max_angle_error) = _compare(variant, model, found, expected, tol, positions, nonlinear)
    _contiguous_offset(result)
    if key_found is not None:
        result.key = _key_result(variant, model, found, key_found, expected, tol, positions, probe)
        if result.key.get("verdict") and _WORSE[result.key["verdict"]] > _WORSE[result.verdict]:
            result.verdict = result.key["verdict"]
            result.differences = result.differences + result.key.pop("_differences", [])
            result.relayout = result.relayout or result.key.get("relayout")
        result.key.pop("_differences", None)
    stateful = _stateful(probe, variant, positions, probed)
    if stateful is not None:
        result.verdict = "differs"
        result.differences = [stateful] + list(result.differences)
    result.seconds = time.perf_counter() - start
    result.probe_calls = probe.calls
    return result


def _in_model_order(order: tuple, found, key_found, expected, positions) -> tuple:
    """``(found, key_found, said)`` for a model that writes its rotated block out permuted:
    ``out[i] = rotated[order[i]]`` (DeepSeek-V3's and LongCat-Flash's ``rope_interleave``).  The code may write
    the model's order or the pairs in place: either gives the model's scores, since queries and keys are
    written alike.  Its outputs are compared in whichever of the two fits (at position 0 when probed, where
    the map is the identity or the permutation); the key, if any, in the same order as the query."""
    back = np.argsort(np.asarray(order))  # the code's outputs put back in pair order
    in_pairs = found[:, back, :]
    zero = [t for t, p in enumerate(np.asarray(positions).reshape(len(found), -1)) if not np.any(p)]
    at = zero[:1] or list(range(len(found)))
    permuted = _max_error(in_pairs[at], expected[at]) < _max_error(found[at], expected[at])
    if permuted:
        found = in_pairs
        key_found = None if key_found is None else key_found[:, back, :]
    shown = ", ".join(map(str, order)) if len(order) <= 8 else (", ".join(map(str, order[:3])) + ", ..., "
                                                                  + ", ".join(map(str, order[-3:])))
    said = (f"output order: the model writes its rotated block out permuted (out[i] = rotated[order[i]], order "
            f"[{shown}]); " + ("the code writes the same order: compared in it" if permuted else
                               "the code's outputs fit the pairs' own order better: compared in that order, "
                               "which gives the same scores q.k (queries and keys are permuted alike)"))
    return found, key_found, {"model": list(order), "code": "model" if permuted else "pairs", "said": said}


def _contiguous_offset(result: AuditResult) -> None:
    """One call per start position rotating nothing: the code ignores its start offset (``offset=``, ``start_pos``)."""
    c = result.convention or {}
    diffs = result.differences
    if c.get("positions") != "contiguous" or result.verdict != "differs" or not diffs:
        return
    if diffs[0].what == "rotary_dim" and diffs[0].found == 0:
        keyword = c.get("call", "")
        result.differences = [Difference(
            "position_offset", "token t of a call starting at position p rotated by the angle of p + t",
            "the same rotation for every start position",
            f"called once per position with the start as the offset ({keyword}), the code rotates every call "
            "as if it started at position 0: the start offset is ignored (a missing offset)",
            basis=diffs[0].basis, position=diffs[0].position, expected_output=diffs[0].expected_output,
            found_output=diffs[0].found_output)]


def _within_memory(probed: tuple, width: int) -> tuple:
    """At most as many positions as keep each ``(T, d, d)`` array of the audit within :data:`IMAGE_BYTES`
    (a wide head: d = 2048 is 32 MB per position); the smallest and the largest positions are kept."""
    most = max(MIN_POSITIONS, IMAGE_BYTES // (8 * width * width))
    if len(probed) <= most:
        return probed, None
    small = most // 2
    kept = tuple(probed[:small]) + tuple(probed[len(probed) - (most - small):])
    return kept, (f"{len(kept)} of the {len(probed)} positions probed at head width {width} (each position's "
                  f"matrix is {8 * width * width / 2**20:.0f} MB)")


def _key_result(variant, model, found, key_found, expected, tol, positions, probe) -> dict:
    """The key output audited too (a ``(q, k) -> (q, k)`` convention): same map, or its own verdict."""
    if variant.key_scale != variant.query_scale:
        return {"verdict": None, "note": "the key output is not audited: the model scales keys differently"}
    if _matches(key_found, found, np.full_like(tol, ENTRY_ATOL)):
        return {"verdict": None, "note": "the key is rotated exactly as the query"}
    lin = _linearity_inputs(variant.width, len(positions))
    verdict, max_error, relayout, _, differences, _ = _compare(variant, model, key_found, expected, tol, positions,
                                                               None)
    for d in differences:
        d.detail = "the key output: " + d.detail
    return {"verdict": verdict, "max_error": max_error, "relayout": relayout, "_differences": differences,
            "note": "the key is rotated differently from the query" if lin is not None else ""}


def _stateful(probe: Probe, variant: Variant, positions: np.ndarray, probed: tuple) -> Difference | None:
    """Identical calls that differ: each probe call was made twice; then once more after a longer call."""
    if probe.stateful:
        return Difference("stateful", "the same output for the same call", "the second identical call differs",
                          "stateful: the second identical call differs (a cache or a counter changes the result "
                          "between calls)", extra={"input": {"x": "any probe batch, called twice"}})
    longest = int(positions.max()) + 1
    length = min(2 * longest, STATE_PROBE_LENGTH)
    if length <= longest or (probe.info or {}).get("positions") in ("contiguous", "scalar"):
        return None  # one call per position: no call is longer than another
    x = np.ones((1, len(positions), variant.width))  # every pair (pair 0's frequency is 1 whatever the base)
    # the longer call carries two positions, 0 and length - 1: a call's length is its largest position id + 1
    if probe.disturbed(x, positions, np.array([0, length - 1], dtype=np.int64)):
        return Difference("stateful", "the same output for the same call",
                          f"a different output after one call of length {length}",
                          f"stateful: the same call gives another result after a call at positions 0..{length - 1}: "
                          "a cache computed for a longer call is kept (like a dynamic-NTK base recomputed for a "
                          "long call and never reset)", basis=None,
                          extra={"input": {"x": "all ones at every probed position", "after": f"positions 0..{length - 1}"}})
    return None
