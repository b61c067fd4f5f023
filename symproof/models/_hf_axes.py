"""Multi-axis (M-RoPE) rotary classes read through transformers: which position axis each pair follows.

A vision-language text model's rotary class (Qwen2-VL's ``Qwen2VLRotaryEmbedding``,
Qwen3-VL's interleaved one, GLM-4V's, ...) takes position ids with one row per
axis (t, h, w); on text every row is the token's position, so a forward on
token ids cannot tell the axes apart.  :func:`drive` therefore runs the shrunk
model's forward again with the position ids every such class receives replaced
by rows of our choosing: one axis at the probed positions and the others at 0
(once per axis), then a mix in which every axis holds a different position
at each token.  What the layers' apply helpers do with them is recorded as for
the text forward (:class:`._hf_read._Recorder`).

:func:`pair_axes` identifies, for each rotated pair of a layer, the axis it
follows: the one axis along which its block turns (a pair turning with none, or
with two, is refused), then checks every recorded run bit for bit against HF's
reference cos and sin of the pair's own frequency at that axis's position, the
mix included.  The result is one axis per pair, which the engine writes as
its M-RoPE bands (:func:`sections`: band ``k`` follows axis ``k mod 3``, bands
of size 0 allowed, so Qwen3-VL's interleaving is bands of one pair).  The
engine's form has three axes (t, h, w) and pair ``r`` at the frequency of pair
``r``; a class with another axis count or whose pairs take other pairs'
frequencies is refused in one line naming it.
"""

from __future__ import annotations

import contextlib

__all__ = ["AXIS_NAMES", "describe", "drive", "forwards_wrapped", "multi_axis_modules", "pair_axes", "sections",
           "substituting"]

#: the engine's M-RoPE axes, in the order of the rows of the position ids
AXIS_NAMES = ("t", "h", "w")
#: how many rows of position ids are tried when the class expands 2-D position ids itself
_TRIED_AXES = range(2, 9)


def multi_axis_modules(model) -> list:
    """The rotary modules of ``model`` whose class's code handles M-RoPE sections (``mrope`` in its source);
    a class whose source cannot be read is listed too (it is not known to be single-axis)."""
    import inspect

    found = []
    for sub in model.modules():
        if type(sub).__name__.endswith("RotaryEmbedding"):
            try:
                code = inspect.getsource(type(sub))
            except (OSError, TypeError):
                found.append(sub)
                continue
            if "mrope" in code.lower():
                found.append(sub)
    return found


def axis_name(axis: int, count: int) -> str:
    return AXIS_NAMES[axis] if count == len(AXIS_NAMES) else f"axis {axis}"


@contextlib.contextmanager
def forwards_wrapped(modules, wrap, owner):
    """``module.forward = wrap(module, module.forward)`` for each module for the duration, yielding ``owner``;
    the class's own forward again afterwards."""
    for module in modules:
        module.forward = wrap(module, module.forward)
    try:
        yield owner
    finally:
        for module in modules:
            with contextlib.suppress(AttributeError):
                del module.forward  # the instance attribute set above: the class's forward again


class _Substitute:
    """Wraps the ``forward`` of multi-axis rotary modules: records what they receive and, while ``rows`` is set,
    replaces their position ids by ``rows`` (one row per axis, broadcast over the batch)."""

    def __init__(self, modules, torch):
        self.modules, self.torch = modules, torch
        self.rows = None
        self.seen: list = []  # (module, x, position ids, output) of each call while rows is None

    def patched(self):
        return forwards_wrapped(self.modules, self._wrap, self)

    def _wrap(self, module, original):
        def forward(x, *args, **kwargs):
            key = "position_ids" if "position_ids" in kwargs else None
            positions = kwargs[key] if key else (args[0] if args else None)
            if self.rows is not None and isinstance(positions, self.torch.Tensor):
                batch = positions.shape[-2] if positions.ndim >= 2 else 1
                rows = self.torch.tensor(self.rows, dtype=positions.dtype, device=positions.device)
                positions = rows[:, None, :].expand(rows.shape[0], batch, rows.shape[1])
                if key:
                    kwargs[key] = positions
                else:
                    args = (positions,) + tuple(args[1:])
            out = original(x, *args, **kwargs)
            if self.rows is None:
                self.seen.append((module, original, x, positions, args[1:] if not key else args, kwargs, out))
            return out

        return forward


def _same_output(a, b, torch) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        return all(_same_output(u, v, torch) for u, v in zip(a, b))
    return False


def _axis_count(seen, steps: int, torch, fail) -> int:
    """How many rows of position ids the multi-axis classes take: what they received if it has rows, else the
    one row count with which the class, given the text positions on every row, returns what it returned."""
    counts = set()
    for module, original, x, positions, rest, kwargs, out in seen:
        if not isinstance(positions, torch.Tensor) or positions.shape[-1] != steps:
            raise fail(f"HF's {type(module).__name__} was called without position ids of the probed length")
        if positions.ndim == 3:
            counts.add(int(positions.shape[0]))
            continue
        text = positions.reshape(1, 1, steps) if positions.ndim == 1 else positions[None]
        fits = []
        for n in _TRIED_AXES:
            call = dict(kwargs)
            given = text.expand(n, text.shape[1], steps)
            try:
                if "position_ids" in call:
                    call["position_ids"] = given
                    got = original(x, *rest, **call)
                else:
                    got = original(x, given, *rest, **call)
            except Exception:  # noqa: BLE001 -- this row count does not fit the class
                continue
            if _same_output(got, out, torch):
                fits.append(n)
        if len(fits) != 1:
            raise fail(f"HF's {type(module).__name__} takes 2-D position ids and expands them itself; how many "
                       f"position axes it reads is not identified (row counts that fit: {fits or 'none'})")
        counts.add(fits[0])
    if len(counts) != 1:
        raise fail(f"the multi-axis rotary classes take {sorted(counts) or 'no'} rows of position ids; expected one "
                   "count")
    return counts.pop()


def _runs(count: int, probe) -> list:
    """The substituted rows: each axis alone at the probed positions (the others at position 0), then a mix
    in which, at each token, every axis holds a different probed position (axis a shifted by 3a tokens)."""
    steps = len(probe)
    runs = []
    for axis in range(count):
        runs.append([list(probe) if a == axis else [0] * steps for a in range(count)])
    runs.append([[probe[(t + 3 * a) % steps] for t in range(steps)] for a in range(count)])
    return runs


@contextlib.contextmanager
def substituting(modules):
    """The multi-axis rotary ``modules`` wrapped (:class:`_Substitute`) for the duration; ``None`` when there are
    none (a single-axis model)."""
    import torch

    if not modules:
        yield None
        return
    substitute = _Substitute(modules, torch)
    with substitute.patched():
        yield substitute


def drive(substitute, forward, recorder, probe, fail):
    """After the text forward through the wrapped classes, run ``forward`` once per substituted set of rows
    (:func:`_runs`) and return ``(axis count, [(rows, {layer: calls})])``; ``recorder`` keeps the calls of the
    text forward it had on entry."""
    import torch

    text_calls, text_inline = dict(recorder.calls), set(recorder.inline)
    runs = []
    if not substitute.seen:
        raise fail(f"HF's {type(substitute.modules[0]).__name__} takes multi-axis (M-RoPE) positions but was not "
                   "called on the probed forward")
    count = _axis_count(substitute.seen, len(probe), torch, fail)
    try:
        for rows in _runs(count, probe):
            substitute.rows = rows
            recorder.calls.clear()
            recorder.inline.clear()
            forward()
            runs.append((rows, dict(recorder.calls)))
    finally:
        substitute.rows = None
    recorder.calls.clear()
    recorder.calls.update(text_calls)
    recorder.inline.clear()
    recorder.inline.update(text_inline)
    return count, runs


def _blocks(maps, width: int, pairing: str, order, layer: int, what: str, fail):
    """``(c, s)``, each ``(T, width/2)``, of a recorded map laid out as the text map was (pairing, output order):
    zero outside the pair blocks and the copied coordinates, every block ``[[c, -s], [s, c]]`` bit for bit."""
    import torch

    head = maps.shape[1]
    rotation = maps if order is None else maps[:, [order.index(a) for a in range(head)], :]
    half = width // 2
    firsts = list(range(half)) if pairing == "half" else list(range(0, width, 2))
    seconds = [a + half for a in firsts] if pairing == "half" else [a + 1 for a in firsts]
    mask = torch.zeros((head, head), dtype=torch.bool)
    for a, b in zip(firsts, seconds):
        mask[a, a] = mask[a, b] = mask[b, a] = mask[b, b] = True
    mask[width:, width:] = torch.eye(head - width, dtype=torch.bool)
    if not bool((rotation[:, ~mask] == 0).all()):
        raise fail(f"layer {layer}: with {what}, coordinates of different pairs mix; not a rotation by pairs")
    eye = torch.eye(head - width, dtype=torch.float64)
    if not bool((rotation[:, width:, width:] == eye).all()):
        raise fail(f"layer {layer}: with {what}, coordinates beyond the rotated {width} change")
    for r, (a, b) in enumerate(zip(firsts, seconds)):
        if not (torch.equal(rotation[:, a, a], rotation[:, b, b]) and torch.equal(rotation[:, b, a], -rotation[:, a, b])):
            raise fail(f"layer {layer}: with {what}, the block of pair {r} (coordinates {a}, {b}) is not a rotation "
                       "[[c, -s], [s, c]]: its two coordinates follow different positions, which no M-RoPE band "
                       "of the engine expresses")
    return rotation[:, firsts, firsts], rotation[:, seconds, firsts]


def _one_call(calls, layer, what, fail):
    """The single recorded map of a layer in one run (the query and the key may be separate calls of one map)."""
    import torch

    if not calls:
        raise fail(f"layer {layer}: no rotary application with {what}, though the text forward has one")
    first = calls[0][1]
    for _, other in calls[1:]:
        if not (isinstance(first, torch.Tensor) and isinstance(other, torch.Tensor) and first.shape == other.shape
                and torch.equal(first, other)):
            raise fail(f"layer {layer}: {len(calls)} rotary applications with {what} that do not record the same map")
    if not isinstance(first, torch.Tensor):
        raise fail(f"layer {layer}: the rotary application with {what} could not be probed")
    return first


def pair_axes(layer: int, count: int, runs, width: int, pairing: str, order, cos, sin, probe, fail) -> tuple:
    """The axis each rotated pair of ``layer`` follows (one per pair), every run checked bit for bit against
    HF's reference ``cos``, ``sin`` (``(T, width/2)`` at ``probe``) of the pair's own frequency."""
    import torch

    names = [axis_name(a, count) for a in range(count)]
    index = {p: k for k, p in enumerate(probe)}
    blocks = []
    for rows, calls in runs:
        what = "positions " + ", ".join(f"{n} = {list(r)[:3]}..." for n, r in zip(names, rows))
        blocks.append((rows, what, _blocks(_one_call(calls.get(layer, []), layer, what, fail), width, pairing,
                                           order, layer, what, fail)))
    axes = []
    for r in range(width // 2):
        turning = [a for a in range(count)
                   if not (bool((blocks[a][2][0][:, r] == blocks[a][2][0][0, r]).all())
                           and bool((blocks[a][2][1][:, r] == blocks[a][2][1][0, r]).all()))]
        if len(turning) != 1:
            raise fail(f"layer {layer}: pair {r} turns with {' and '.join(names[a] for a in turning) or 'none'} of "
                       f"the {count} position axes; expected exactly one")
        axes.append(turning[0])
    for rows, what, (c, s) in blocks:
        for r, axis in enumerate(axes):
            at = torch.tensor([index[p] for p in rows[axis]])
            for got, want, name in ((c[:, r], cos[at, r], "cos"), (s[:, r], sin[at, r], "sin")):
                if not bool((got == want).all()):
                    t = int((got != want).nonzero()[0])
                    other = _same_column(got, cos if name == "cos" else sin, at)
                    hint = (f": it turns at pair {other}'s frequency (HF permutes the frequencies across pairs, which "
                            "the engine's M-RoPE form, pair r at frequency r, does not express)") if other is not None \
                        else f", not HF's reference {float(want[t])!r} at its {names[axis]} position {rows[axis][t]}"
                    raise fail(f"layer {layer}: pair {r} with {what} at token {t}: {name} {float(got[t])!r}{hint}")
    return tuple(axes)


def _same_column(got, table, at):
    """The pair whose reference column ``got`` equals at the positions ``at`` (a permuted frequency), else None."""
    import torch

    for k in range(table.shape[1]):
        if torch.equal(got, table[at, k]):
            return k
    return None


def sections(axes) -> tuple:
    """The engine's M-RoPE bands for one axis per pair: band ``k`` follows axis ``k mod 3`` (bands may be
    empty), so any sequence of the three axes is written out, Qwen2-VL's in three bands, Qwen3-VL's
    interleaving in bands of one pair."""
    out: list = []
    for axis in axes:
        if not (out and (len(out) - 1) % 3 == axis):
            out.append(0)  # open bands, empty ones as needed, until the last one follows `axis`
            while (len(out) - 1) % 3 != axis:
                out.append(0)
        out[-1] += 1
    return tuple(out)


def describe(axes, count: int = 3) -> str:
    """Which pairs follow which axis, as runs: ``pairs 0..15: t; 16..39: h`` or, for axes that take turns,
    ``pairs 0..59: t, h, w in turn``."""
    names = [axis_name(a, count) for a in range(count)]
    parts, r, n = [], 0, len(axes)
    while r < n:
        for period in range(count, 1, -1):  # axes taking turns: a repeated period of distinct axes
            if len(set(axes[r:r + period])) != period:
                continue
            end = r + period
            while end < n and axes[end] == axes[end - period]:
                end += 1
            end = r + (end - r) // period * period  # whole turns: what follows is read as runs
            if end - r >= 2 * period:
                parts.append(f"{r}..{end - 1}: {', '.join(names[a] for a in axes[r:r + period])} in turn")
                r = end
                break
        else:
            same = r
            while same + 1 < n and axes[same + 1] == axes[r]:
                same += 1
            parts.append(f"{r}..{same}: {names[axes[r]]}" if same > r else f"{r}: {names[axes[r]]}")
            r = same + 1
    return "pairs " + "; ".join(parts)
