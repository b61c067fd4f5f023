"""The audit of 2-D and 3-D rotary code (axial ViT, Flux, Qwen2-VL's M-RoPE) against a multi-axis model, per axis.

A multi-axis model turns pair ``r`` by ``theta_r * m[axis(r)]``: the position is a vector ``m`` of ``A``
coordinates and each pair follows one of them.  It comes from a variant file with ``[position] axes``
and ``axis`` (:attr:`Variant.axes_of_pairs`), or from a config's ``mrope_section`` (Qwen2-VL: the
pairs cut into consecutive sections following t, h, w).

The code is probed with the basis vectors at position vectors ``(T, A)``: every axis alone (the others at
0) at the audit's positions, and mixed vectors in which every axis holds another value.  The verdict
compares every image with the model's, entry by entry, with the 1-D audit's tolerances.  A difference is
read off per axis: which axis each pair turns with and at which frequency (unwrapped over the probed
positions), then named: axes in the wrong order, sections swapped or split otherwise, one axis's
frequencies (with the base that explains them when they are geometric), an axis turning the other way,
axes that do not add.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._ground._errors import InvalidInputError, SymproofError
from ..encodings import pair_indices, pairing_permutation
from ..variants import Variant
from ._diagnose import ANGLE_ATOL, ANGLE_REL, WHATS, Difference
from ._model import Model
from ._probe import Probe

__all__ = ["AxesModel", "axes_model", "audit_axes", "axis_positions", "AXES_WHATS"]

#: what a per-axis difference names: the one-axis audit's words, and ``axes`` (which axis a pair follows)
AXES_WHATS = WHATS + ("axes",)

#: positions each axis is probed at alone (the 1-D audit's, without 0 and beyond the model's length)
AXIS_POSITIONS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 31, 64, 100, 257, 1000, 4095)
#: mixed position vectors (every axis another value), cut to the model's axis count and length
MIXED = ((1, 2, 3), (3, 1, 2), (5, 8, 13), (100, 31, 7), (257, 1000, 64), (4095, 16, 257))
#: trial positions that find the convention: position 0 first (the identity), then distinct values per axis
TRIAL = ((0, 0, 0), (1, 2, 3), (2, 0, 1), (3, 1, 0), (5, 7, 2))
_OTHER = {"adjacent": "half", "half": "adjacent"}
#: the entry tolerance of the 1-D audit (an entry within this plus its pair's angle tolerance matches)
ENTRY_ATOL = 1e-5


@dataclass
class AxesModel:
    """The declared multi-axis map: the 1-D model's pairs and frequencies, and the axis each pair follows."""

    model: Model
    names: tuple
    axis_of_pair: list
    source: str  # where the axes come from (the variant's [position], a config's mrope_section)

    @property
    def count(self) -> int:
        return len(self.names)

    @property
    def width(self) -> int:
        return self.model.variant.width

    def label(self, a: int) -> str:
        return f"axis {a} ({self.names[a]})"

    def sections(self) -> list | None:
        """Pairs per axis when each axis's pairs are one block and the blocks come in axis order (else None)."""
        runs = _runs(self.axis_of_pair)
        if [a for a, _ in runs] != list(range(self.count)):
            return None
        return [n for _, n in runs]

    def describe(self) -> str:
        parts = []
        for a in range(self.count):
            rs = [r for r, x in enumerate(self.axis_of_pair) if x == a]
            span = f"pairs {rs[0]}..{rs[-1]}" if rs and rs == list(range(rs[0], rs[-1] + 1)) else f"{len(rs)} pairs"
            parts.append(f"{self.names[a]} ({span})")
        return f"axes {', '.join(parts)}, from {self.source}"

    def angles(self, positions: np.ndarray) -> np.ndarray:
        """``(T, n_pairs)``: pair r turned by its frequency times the transformed position of its own axis."""
        m = self.model
        g = m.transform(np.asarray(positions, dtype=np.float64) + m.offset)  # (T, A)
        return m.sign * g[:, self.axis_of_pair] * m.thetas[None, :]

    def images(self, positions: np.ndarray, pairing: str | None = None) -> np.ndarray:
        d = self.width
        out = np.broadcast_to(np.eye(d), (len(positions), d, d)).copy()
        angles = self.angles(positions)
        cos, sin = np.cos(angles), np.sin(angles)
        pairs = np.array(pair_indices(self.model.variant.rotated_width, pairing or self.model.pairing),
                         dtype=np.int64).reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        out[:, a, a], out[:, a, b] = cos, -sin
        out[:, b, a], out[:, b, b] = sin, cos
        return out

    def tolerance(self, positions: np.ndarray, rounding: float = 0.0) -> np.ndarray:
        tol = np.full((len(positions), self.width), ENTRY_ATOL + rounding)
        angles = np.abs(self.angles(positions))
        for r, (a, b) in enumerate(self.model.pairs):
            extra = ANGLE_ATOL + ANGLE_REL * angles[:, r]
            tol[:, a] += extra
            tol[:, b] += extra
        return tol


def _model_bands(config: dict):
    """The M-RoPE bands of the model ``config`` is read as (band k following axis k mod 3), or None when it is
    not read (the caller then reads ``mrope_section`` as consecutive sections, or refuses)."""
    from ..models._config import parse_model

    try:
        return parse_model(config, "<config>").mrope_section
    except SymproofError:
        return None


def _layout(axis_of_pair) -> str:
    """``pairs 0..59: t, h, w in turn; 60..63: t``-style words for a pair -> axis list."""
    names = "thw"
    cycle = next((r for r, a in enumerate(axis_of_pair) if a != r % 3), len(axis_of_pair))
    if cycle % 3 and cycle < len(axis_of_pair) and len(set(axis_of_pair[cycle - cycle % 3:])) == 1:
        cycle -= cycle % 3  # whole turns: "0..59 in turn; 60..63: t" rather than "0..60 ...; 61..63: t"
    rest = set(axis_of_pair[cycle:])
    if cycle >= 3 and len(rest) <= 1:
        tail = f"; {cycle}..{len(axis_of_pair) - 1}: {names[rest.pop()]}" if rest else ""
        return f"pairs 0..{cycle - 1}: t, h, w in turn{tail}"
    spans, start = [], 0
    runs = _runs(axis_of_pair)
    for a, n in runs:
        spans.append(f"{start}..{start + n - 1}: {names[a]}")
        start += n
    return "pairs " + "; ".join(spans)


def _runs(values) -> list:
    """``[(value, length), ...]`` of consecutive equal values."""
    runs: list = []
    for v in values:
        if runs and runs[-1][0] == v:
            runs[-1][1] += 1
        else:
            runs.append([v, 1])
    return [(v, n) for v, n in runs]


def _mrope_section(config: dict | None):
    """``(sections, where)`` of a config's M-RoPE (Qwen2-VL's ``rope_scaling.mrope_section``), or None."""
    if not isinstance(config, dict):
        return None
    for scope in (config.get("text_config"), config):
        if not isinstance(scope, dict):
            continue
        for key in ("rope_scaling", "rope_parameters"):
            table = scope.get(key)
            if isinstance(table, dict) and table.get("mrope_section") is not None:
                where = f"{'text_config.' if scope is not config else ''}{key}.mrope_section"
                return table, where
    return None


def axes_model(variant: Variant, config: dict | None) -> AxesModel | None:
    """The multi-axis model of ``variant`` (its ``[position] axes``) or of ``config`` (``mrope_section``);
    None for a one-axis model.  What the per-axis audit cannot compare is refused in one line."""
    if len(variant.axes) > 1:
        if variant.mixed:
            raise InvalidInputError(f"{variant.source}: every pair of {variant.name!r} reads every axis "
                                    "(frequencies.rule = 'per_axis'); the audit compares models whose pairs each "
                                    "follow one axis")
        if not variant.standard_block or variant.query_scale is not None or variant.key_scale is not None:
            raise InvalidInputError(f"{variant.source}: the multi-axis audit compares plain rotations; "
                                    f"{variant.name!r} scales or has a block of its own")
        return AxesModel(Model.of(variant), tuple(variant.axes), variant.axes_of_pairs(),
                         f"{variant.source} [position] axes and axis")
    found = _mrope_section(config)
    bands = _model_bands(config)
    if bands is not None:  # the layout as symproof check reads the model (transformers' code for a type without a row)
        if variant.length_dependent or variant.transform is not None:
            raise InvalidInputError(f"--like: an M-RoPE model with a length rule or a position transform is not "
                                    "audited per axis")
        axis_of_pair = [k % 3 for k, n in enumerate(bands) for _ in range(n)]
        stated = f"{found[1]} {found[0].get('mrope_section')}" if found else "M-RoPE"
        if len(axis_of_pair) != variant.n_pairs:
            raise InvalidInputError(f"--like: {stated} is read as {len(axis_of_pair)} pairs; the head rotates "
                                    f"{variant.n_pairs} (head width {variant.width})")
        source = stated
        if found is None or list(bands) != list(found[0].get("mrope_section") or ()):
            source += (" as the model lays it out (" + _layout(axis_of_pair) + ")" if found else
                       " as transformers' code lays it out, the config stating no sections (" + _layout(axis_of_pair)
                       + ")")
        return AxesModel(Model.of(variant), ("t", "h", "w"), axis_of_pair, source)
    if found is None:
        return None
    table, where = found
    sections = table.get("mrope_section")
    if table.get("mrope_interleaved") or "interleav" in str(table.get("rope_type", table.get("type", ""))):
        raise InvalidInputError(f"--like: {where} is interleaved (Qwen3-VL's layout); the audit reads consecutive "
                                "sections only: pass a variant file whose position.axis states the layout")
    if (not isinstance(sections, list) or len(sections) != 3 or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sections)):
        raise InvalidInputError(f"--like: {where} must be three pair counts (t, h, w), got {sections!r}")
    if sum(sections) != variant.n_pairs:
        raise InvalidInputError(f"--like: {where} {sections} covers {sum(sections)} pairs; the head rotates "
                                f"{variant.n_pairs} (head width {variant.width})")
    if variant.length_dependent or variant.transform is not None:
        raise InvalidInputError(f"--like: an M-RoPE model with a length rule or a position transform is not audited "
                                "per axis")
    axis_of_pair = [a for a, n in enumerate(sections) for _ in range(n)]
    return AxesModel(Model.of(variant), ("t", "h", "w"), axis_of_pair, f"{where} {sections}")


def axis_positions(model: AxesModel, bound: int | None) -> tuple:
    """``(rows, kinds)``: the probed position vectors (T, A) -- zero, each axis alone, mixed -- and what each is."""
    a_count = model.count
    limit = bound if bound is not None else None
    alone = [p for p in AXIS_POSITIONS if limit is None or p < limit]
    rows, kinds = [tuple([0] * a_count)], [("zero", None, 0)]
    for a in range(a_count):
        for p in alone:
            v = [0] * a_count
            v[a] = p
            rows.append(tuple(v))
            kinds.append(("axis", a, p))
    for m in MIXED:
        v = tuple((list(m) * a_count)[:a_count])
        if limit is None or max(v) < limit:
            rows.append(v)
            kinds.append(("mixed", None, None))
    return np.array(rows, dtype=np.int64), kinds


def _trial(a_count: int) -> np.ndarray:
    return np.array([tuple((list(t) * a_count)[:a_count]) for t in TRIAL], dtype=np.int64)


def _text(v) -> str:
    return "(" + ", ".join(str(int(x)) for x in v) + ")"


# -- the audit ---------------------------------------------------------------------------------------


def audit_axes(probe: Probe, model: AxesModel, label: str, start: float, bound: int | None,
               dtype: str | None, result_factory):
    """The per-axis audit of the code behind ``probe``: an :class:`~._audit.AuditResult` (``result_factory``)."""
    rng = np.random.default_rng(7)
    trial = _trial(model.count)
    x = rng.standard_normal((2, len(trial), model.width))
    info = probe.setup_with(x, trial)
    positions, kinds = axis_positions(model, bound)
    extra = np.concatenate([rng.standard_normal((2, len(positions), model.width)),
                            np.zeros((1, len(positions), model.width))])
    found, key_found, outputs = probe.basis_images(positions, extra=extra)
    rounding = {"float16": 4 * 2.0 ** -11, "bfloat16": 4 * 2.0 ** -8}.get(dtype, 0.0)
    expected = model.images(positions)
    tol = model.tolerance(positions, rounding)
    result = result_factory(positions, info)
    predicted = np.einsum("tij,ktj->kti", found, extra)
    scale = 1.0 + np.abs(extra).max(axis=-1, keepdims=True) * max(1.0, float(np.abs(found).max()))
    if float((np.abs(outputs - predicted) / scale).max()) > max(1e-2, 8 * rounding):
        k, t = (int(v) for v in np.unravel_index(int(np.argmax(np.abs(outputs - predicted).max(axis=-1))),
                                                  outputs.shape[:2]))
        result.verdict = "differs"
        result.differences = [Difference("nonlinear", "a linear map of x", "outputs its basis images do not predict",
                                         f"a random x at position {_text(positions[t])} is not mapped as the sum of "
                                         "its coordinates' images: the code is not linear in x",
                                         extra={"input": {"x": "random", "position": _text(positions[t])}})]
        return _finish(result, probe, start)
    verdict, err, relayout = _verdict(model, found, expected, tol, positions)
    if key_found is not None and verdict != "differs":
        k_verdict, k_err, _ = _verdict(model, key_found, expected, tol, positions)
        if k_verdict == "differs":
            verdict, found = "differs", key_found
            result.key = {"verdict": "differs", "note": "the key is rotated differently from the query"}
        else:
            result.key = {"verdict": None, "note": "the key is rotated exactly as the query"
                          if np.array_equal(key_found, found) else "the key is audited too: " + k_verdict}
            err = max(err, k_err)
    result.verdict, result.max_error, result.relayout = verdict, err, relayout
    if verdict == "differs":
        result.differences = diagnose(model, found, expected, tol, positions, kinds)
    return _finish(result, probe, start)


def _finish(result, probe: Probe, start: float):
    result.seconds = time.perf_counter() - start
    result.probe_calls = probe.calls
    if probe.stateful:
        result.verdict = "differs"
        result.differences = [Difference("stateful", "the same output for the same call",
                                         "the second identical call differs",
                                         "stateful: the second identical call differs (a cache or a counter "
                                         "changes the result between calls)")] + list(result.differences)
    return result


def _within(found, expected, tol) -> bool:
    return all(bool(np.all(np.abs(found[t] - expected[t]) <= tol[t][None, :])) for t in range(len(found)))


def _err(found, expected) -> float:
    return max((float(np.abs(found[t] - expected[t]).max()) for t in range(len(found))), default=0.0)


def _verdict(model: AxesModel, found, expected, tol, positions) -> tuple:
    if _within(found, expected, tol):
        return "equivalent", _err(found, expected), None
    v = model.model.variant
    other = _OTHER.get(v.pairing)
    if other and v.rotated_width == v.width:
        q = pairing_permutation(v.width, v.pairing, other)
        relaid = expected[:, q][:, :, q]
        if _within(found, relaid, tol[:, q]):
            return "equivalent_after_relayout", _err(found, relaid), {
                "call": f"relayout_pairing(w, n_heads, src={v.pairing!r}, dst={other!r})",
                "applies_to": "the query and key projections Wq, Wk (and their biases), not Wv or Wo",
                "permutation": q,
                "why": f"the function rotates {other} pairs where the model rotates {v.pairing} ones; with the "
                       "re-laid weights it computes the model's scores exactly (claim rope.pairing_permutation)"}
    return "differs", _err(found, expected), None


# -- reading each pair's axis and frequency off the images ---------------------------------------------


def _blocks(model: AxesModel, found: np.ndarray):
    """``(cos, sin, leak)`` of every model pair at every probed vector: the found 2x2 block read as a rotation,
    and how far it is from one (unequal diagonal, asymmetric off-diagonal, coordinates outside the pair)."""
    pairs = np.array(model.model.pairs, dtype=np.int64).reshape(-1, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    c = (found[:, a, a] + found[:, b, b]) / 2
    s = (found[:, b, a] - found[:, a, b]) / 2
    leak = np.maximum(np.abs(found[:, a, a] - found[:, b, b]), np.abs(found[:, b, a] + found[:, a, b]))
    cols = found[:, :, np.concatenate([a, b])].copy()
    n = len(a)
    for i in range(n):
        cols[:, [a[i], b[i]], [i, n + i]] = 0.0
        cols[:, [b[i], a[i]], [i, n + i]] = 0.0
    leak = np.maximum(leak, np.abs(cols).max(axis=1)[:, :n])
    leak = np.maximum(leak, np.abs(cols).max(axis=1)[:, n:])
    return c, s, leak


def _frequency(ps: list, phis: list) -> float:
    """The frequency that gives the angles ``phis`` (wrapped) at the increasing positions ``ps``: unwrapped one
    position at a time from the first."""
    w = phis[0] / ps[0]
    for p, phi in zip(ps[1:], phis[1:]):
        k = round((w * p - phi) / (2 * math.pi))
        w = (phi + 2 * math.pi * k) / p
    return w


def read_axes(model: AxesModel, found: np.ndarray, positions: np.ndarray, kinds: list) -> dict:
    """Per pair: the axes it turns with and the frequency on each, its scale, whether it is a rotation block."""
    c, s, leak = _blocks(model, found)
    radius = np.hypot(c, s)
    phi = np.arctan2(s, c)
    out = {"turns": [], "freq": [], "rotation": [], "radius": []}
    for r in range(len(model.model.thetas)):
        turns, freq = [], {}
        for a in range(model.count):
            rows = [t for t, k in enumerate(kinds) if k[0] == "axis" and k[1] == a]
            ps = [kinds[t][2] for t in rows]
            angles = [float(phi[t, r]) for t in rows]
            if max((abs(x) for x in angles), default=0.0) > 1e-6:
                turns.append(a)
                freq[a] = _frequency(ps, angles)
        out["turns"].append(turns)
        out["freq"].append(freq)
        out["rotation"].append(float(leak[:, r].max()) <= 1e-4)
        out["radius"].append(float(np.abs(radius[:, r] - 1).max()))
    return out


def _close(w: float, theta: float) -> bool:
    return abs(w - theta) <= 1e-7 + 1e-6 * abs(theta)


def _pairs_text(rs: list) -> str:
    if not rs:
        return "no pair"
    if rs == list(range(rs[0], rs[-1] + 1)):
        return f"pair {rs[0]}" if len(rs) == 1 else f"pairs {rs[0]}..{rs[-1]} ({len(rs)} pairs)"
    return "pairs " + ", ".join(str(r) for r in rs[:8]) + (", ..." if len(rs) > 8 else "") + f" ({len(rs)} pairs)"


def _shown(d: Difference, model: AxesModel, found, expected, positions, kinds, r: int, axis: int) -> Difference:
    """``d`` with a minimal input: the first coordinate of pair ``r`` at the smallest position of ``axis`` alone
    whose image differs (its expected and found output coordinates)."""
    a, _ = model.model.pairs[r]
    rows = [t for t, k in enumerate(kinds) if k[0] == "axis" and k[1] == axis]
    bad = [t for t in rows if float(np.abs(found[t][:, a] - expected[t][:, a]).max()) > 1e-6]
    if not bad:
        return d
    t = bad[0]
    d.basis, d.position = int(a), _text(positions[t])
    d.expected_output = {str(i): round(float(v), 9) for i, v in enumerate(expected[t][:, a]) if abs(v) > 1e-12}
    d.found_output = {str(i): round(float(v), 9) for i, v in enumerate(found[t][:, a]) if abs(v) > 1e-12}
    return d


def diagnose(model: AxesModel, found, expected, tol, positions, kinds) -> list:
    """The differences of images that do not match, named per axis."""
    read = read_axes(model, found, positions, kinds)
    n = len(model.model.thetas)
    thetas = model.model.thetas
    want = model.axis_of_pair
    diffs: list = []
    not_rotation = [r for r in range(n) if not read["rotation"][r]]
    if not_rotation:
        v = model.model.variant
        return [Difference("pairing", f"{v.pairing} pairs, each turned as one 2x2 rotation",
                           f"{_pairs_text(not_rotation)} not rotated as the model's pairs",
                           f"the coordinates of {_pairs_text(not_rotation)} are mixed with others or not turned as "
                           f"a rotation: the code pairs coordinates otherwise than the model's {v.pairing} pairing "
                           "(or rotates by other than a 2x2 rotation); the axes cannot be read per pair")]
    scaled = [r for r in range(n) if read["radius"][r] > 1e-4]
    if scaled:
        diffs.append(Difference("scaling", "pairs turned without scaling", f"{_pairs_text(scaled)} scaled",
                                f"{_pairs_text(scaled)} change length (|found block| != 1): a scale the model "
                                "does not have"))
    moving = [r for r in range(n) if thetas[r] != 0]
    several = [r for r in range(n) if len(read["turns"][r]) > 1]
    if several:
        r = several[0]
        diffs.append(Difference("axes", f"pair {r} turns with {model.label(want[r])} only",
                                f"pair {r} turns with " + " and ".join(model.label(a) for a in read["turns"][r]),
                                f"{_pairs_text(several)} turn with several axes at once: the code adds the angles of "
                                "other axes to them (a pair follows one axis in the model)"))
    still = [r for r in moving if not read["turns"][r]]
    if still:
        axes_missing = sorted({want[r] for r in still})
        diffs.append(Difference("axes", "every pair turns with its axis",
                                f"{_pairs_text(still)} do not turn",
                                f"{_pairs_text(still)} of " + ", ".join(model.label(a) for a in axes_missing)
                                + " do not turn with any axis: the code leaves them unrotated"))
    single = [r for r in moving if len(read["turns"][r]) == 1]
    got = {r: read["turns"][r][0] for r in single}
    wrong = [r for r in single if got[r] != want[r]]
    mapping = None
    if wrong:
        # one axis for another throughout: axes in the wrong order (a permutation of the axes)
        pi: dict = {}
        consistent = True
        for r in single:
            if pi.setdefault(want[r], got[r]) != got[r]:
                consistent = False
        if consistent and len(set(pi.values())) == len(pi) and all(
                _close(read["freq"][r][got[r]], thetas[r]) for r in single):
            moved = sorted(a for a in pi if pi[a] != a)
            text = "; ".join(f"the pairs of {model.label(a)} turn with the positions of {model.label(pi[a])}"
                             for a in moved)
            first_moved = next(r for r in single if want[r] == moved[0])
            diffs.append(_shown(Difference("axes", "each axis's pairs turn with its own positions",
                                    "axes in the wrong order: " + ", ".join(
                                        f"{model.names[a]}->{model.names[pi[a]]}" for a in moved),
                                    f"axes in the wrong order: {text} (each axis's frequencies are right): the code "
                                    "reads the position coordinates in another order than the model, or the model "
                                    "lists its axes in another order than the code takes them",
                                    extra={"permutation": {model.names[a]: model.names[pi[a]] for a in pi}}),
                                model, found, expected, positions, kinds, first_moved, moved[0]))
            mapping = pi
        else:
            found_axis = [got.get(r, -1) for r in range(n)]
            runs = _runs(found_axis)
            want_runs = _runs(want)
            sizes = [sz for _, sz in runs]
            want_sizes = [sz for _, sz in want_runs]
            contiguous = len({a for a, _ in runs}) == len(runs) and -1 not in found_axis
            found_text = ", ".join(f"{model.names[a]} {sz}" if a >= 0 else f"none {sz}" for a, sz in runs)
            want_text = ", ".join(f"{model.names[a]} {sz}" for a, sz in want_runs)
            if contiguous and sorted(sizes) == sorted(want_sizes) and len(runs) == len(want_runs):
                what = "sections swapped"
            else:
                what = "wrong section split"
            first = wrong[0]
            diffs.append(Difference("axes", f"sections (pairs per axis, in order): {want_text}",
                                    f"{what}: {found_text}",
                                    f"{what}: the code assigns {_pairs_text(wrong)} to other axes than the model "
                                    f"(pair {first} turns with {model.label(got[first])}, the model's is "
                                    f"{model.label(want[first])}); sections in pair order: {found_text} where the "
                                    f"model says {want_text}",
                                    extra={"found_sections": [[model.names[a] if a >= 0 else None, sz]
                                                              for a, sz in runs],
                                           "expected_sections": [[model.names[a], sz] for a, sz in want_runs]}))
    # frequencies, per axis, on the pairs that turn with the axis the model (or the order found) gives them
    for a in range(model.count):
        own = [r for r in single if want[r] == a and got[r] == (mapping or {}).get(a, a)]
        bad = [r for r in own if not _close(read["freq"][r][got[r]], thetas[r])]
        if not bad:
            continue
        ws = np.array([read["freq"][r][got[r]] for r in own])
        th = thetas[own]
        flipped = [r for r in bad if _close(-read["freq"][r][got[r]], thetas[r])]
        if len(flipped) == len(bad) == len(own):
            diffs.append(_shown(Difference("direction", f"{model.label(a)} turns by +theta * m",
                                           f"{model.label(a)} turns by -theta * m",
                                           f"{model.label(a)}: its {_pairs_text(own)} turn the other way (a sine "
                                           "sign)"), model, found, expected, positions, kinds, own[0], a))
            continue
        r = bad[0]
        detail = (f"{model.label(a)}: {_pairs_text(bad)} turn at other frequencies: pair {r} at "
                  f"{read['freq'][r][got[r]]:.9g} where the model says {thetas[r]:.9g}")
        extra: dict = {"axis": model.names[a]}
        base = _base_of(own, ws, th, model)
        if base is not None:
            detail += (f"; the axis's {len(own)} frequencies are geometric with base {base[0]:.6g} where the "
                       f"model's base is {base[1]:.6g} (a wrong theta on this axis, or the same frequencies from a wrong "
                       "exponent denominator: the numbers cannot tell which)")
            extra["found_base"], extra["expected_base"] = base
        diffs.append(_shown(Difference("frequency", f"{model.label(a)} pair {r}: {thetas[r]:.9g}",
                                       f"{read['freq'][r][got[r]]:.9g}", detail, extra=extra),
                            model, found, expected, positions, kinds, r, a))
    if not diffs:
        mixed = [t for t, k in enumerate(kinds) if k[0] == "mixed"]
        bad_t = [t for t in mixed if not np.all(np.abs(found[t] - expected[t]) <= tol[t][None, :])]
        if bad_t:
            t = bad_t[0]
            diffs.append(Difference("axes", "the rotation of a position vector is that of each axis added",
                                    f"another rotation at {_text(positions[t])}",
                                    f"each axis alone is turned as the model says, but at the position vector "
                                    f"{_text(positions[t])} the images differ: the axes do not add (the code "
                                    "combines the coordinates of a position otherwise)",
                                    extra={"input": {"position": _text(positions[t])}}))
    if not diffs:
        t = max(range(len(found)), key=lambda t: float(np.abs(found[t] - expected[t]).max()))
        i, j = (int(v) for v in np.unravel_index(int(np.argmax(np.abs(found[t] - expected[t]))), found[t].shape))
        diffs.append(Difference("axes", f"{expected[t][i, j]:.9g}", f"{found[t][i, j]:.9g}",
                                f"no rule of the diagnosis applies; the worst entry: output coordinate {i} of e_{j} "
                                f"at position {_text(positions[t])}"))
    return diffs


def _base_of(own: list, ws: np.ndarray, th: np.ndarray, model: AxesModel):
    """``(found base, model base)`` when the axis's found and declared frequencies are both geometric from 1
    (``w_i = q^i``): the found base is the model's raised to ``log q' / log q``; else None."""
    if len(own) < 3 or not (np.all(ws > 0) and np.all(th > 0)):
        return None
    if not (_close(ws[0], 1.0) and _close(th[0], 1.0)):
        return None
    q, q2 = th[1] / th[0], ws[1] / ws[0]
    if not (np.allclose(th, q ** np.arange(len(th)), rtol=1e-6) and np.allclose(ws, q2 ** np.arange(len(ws)),
                                                                                rtol=1e-5)):
        return None
    if not 0 < q < 1 or not 0 < q2 < 1:
        return None
    v = model.model.variant
    base = None
    try:
        base = float(v.base.build({**v.width_env(), "seq_len": v._length(None)})) if v.base is not None else None
    except Exception:  # noqa: BLE001 - a base given as a formula of more than the widths: read it off q
        base = None
    if base is None:
        base = float(v.params.get("base", 0) or 0) or None
    if base is None or base <= 1:
        return None
    return base ** (math.log(q2) / math.log(q)), base
