"""The ``decay`` property: does the score fall as the key moves into the past?

Two statements, one per kind of file (the README, section 4, and ``_spec.py`` say the same):

* **bias** files: ``b(i, i - D - 1) <= b(i, i - D)`` for every distance ``D >= 0``, every query
  ``i`` and every head, and in every head ``b(i, i - D) < b(i, i)`` for some ``D`` (a constant bias
  does not decay).  Proved by monotonicity rules over the real extension ``D >= 0``
  (:class:`_Monotone`: each node's direction and exact range, monotone functions composed
  monotonically, a ``where`` split where its condition changes over the integers, a lookup table
  read through a monotone integer index whose values over the index range are checked one by one),
  over all heads at once and else head by head (each head's own slope and table entries); refuted
  by a certified witness ``(h, i, D)`` with ``b(i, i - D - 1) > b(i, i - D)`` in a head the rules
  leave open, or by a head the rules show constant in ``D``.
* **rotary** files: RoFormer's long-term decay bound (Su et al., section 3.4.3) for the file's
  frequencies, ``B(D) = (1/n) sum_{r=1..n} |S_r(D)|``, ``S_r(D) = sum_{k<r} a_k(D) e^{i x_k(D)}``
  with ``x_k(D) = (g(D) - g(0)) omega_k`` (g the position transform, D added to every axis) and
  ``a_k(D)`` the per-pair scales of a query at ``D`` and a key at ``0`` (1 without ``[scale]`` or
  ``[attention]``), is non-increasing in ``D >= 0`` and ``B(D) < B(0)`` for some ``D``.  The Abel
  summation identity behind the bound is proved for the file's ``n`` (a finite polynomial
  identity); the second half is refuted when ``|S_r(D)|^2 = |S_r(0)|^2`` is proved for every ``r`` and
  every ``D >= 0`` (a constant bound, whatever makes it so); the monotonicity is refuted by a certified
  ``D`` with ``B(D + 1) > B(D)`` (tables read at their exact index at each ``D``; a float64 scan
  proposes the distances, interval arithmetic on the exact frequencies certifies one; where the
  scales move with ``D`` the exact scan tries every ``D <= 65`` and the powers of two up to
  ``2^20``), or, for all-zero frequencies with constant scales, by the
  exact constancy ``B(D) = (n + 1)/2``.  With constant amplitudes a non-constant ``B`` is never
  non-increasing (Dirichlet: some ``D`` turns every angle back near 0, so ``B(D)`` returns near
  ``B(0)``): the rotary statement is refuted or unknown, never proved, and the check looks for
  the rise.

Outside what these decide, the verdict is unknown: a bias undefined at some ``D >= 0`` (``log`` of
the distance at ``D = 0``) is never proved.

Longer than 600 lines: the decay bound's statement, its certified search and its rigorous enclosure
are one derivation, each step using the previous one's data.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy as sp
from mpmath import iv
from mpmath.libmp import finf, fnan, fninf, to_rational

from .._ground._errors import VariantFileError
from ..checker._interval import real_enclosure, value_at
from ..prover import PROVED as PROVED_STATUS
from ..prover import _budget, prove_equal
from ._formula import LookupBase, mod_as_floor

__all__ = ["decay_statement", "derive_decay", "SMALL_OFFSETS", "FAR_OFFSETS", "MAX_ABEL_PAIRS"]

#: the symbols of the statements (the same names and assumptions as :mod:`._check`'s, so equal to them)
D = sp.Symbol("D", integer=True)
i = sp.Symbol("i", integer=True)
slope_sym = sp.Symbol("slope", real=True)
#: a second distance: two distances in one unevaluated expression, evaluated bottom-up at a point
#: (substituting a number would let SymPy build the branch a where() does not take, log(0) included)
D2 = sp.Symbol("D2", integer=True)
h_sym = sp.Symbol("h", integer=True, nonnegative=True)

#: distances tried one after the other for a rise, then the far ones (powers of two up to 2^20)
SMALL_OFFSETS = 64
FAR_OFFSETS = tuple(2**k for k in range(7, 21))
#: distances tried for a head's first fall below its offset-0 value
FALL_OFFSETS = (1, 2, 3, 4, 8, 16, 64, 256, 1024, 2**20)
#: most pairs the Abel identity is written out for (n = 512 costs the prover and the checker about a second)
MAX_ABEL_PAIRS = 512
#: most heads a rise is looked for in (first, last, middle, quarter)
MAX_WITNESS_HEADS = 4
#: distances D = 0..HINT_OFFSETS - 1 where float64 looks for a rise of B first (a hint, certified
#: before it counts), and how many hints are certified at most
HINT_OFFSETS = 4096
MAX_HINTS = 8
#: most complex entries of the float64 scan (offsets x pairs: 32 MB)
HINT_ENTRIES = 2**21
#: bits of the interval arithmetic that certifies a rise of RoFormer's bound
PRECISION = 64

_STATEMENTS = {
    "bias": "b(i, i - D - 1) <= b(i, i - D) for every distance D >= 0, every query i and every head, and in every "
            "head b(i, i - D) < b(i, i) for some D: the bias of a past key falls with its distance (a constant "
            "bias does not decay)",
    "rotary": "RoFormer's long-term decay bound for the file's frequencies, B(D) = (1/n) sum_{r=1..n} |S_r(D)| with "
              "S_r(D) = sum_{k<r} a_k(D) e^{i x_k(D)}, x_k(D) = (g(D) - g(0)) omega_k (g the position transform; rho(D, 0) omega_k with "
              "position.relative) and "
              "a_k(D) the pair scales of a query at D and a key at 0, is non-increasing in D >= 0 and B(D) < B(0) "
              "for some D (a constant bound does not decay)",
}


def decay_statement(kind: str) -> str | None:
    """The decay statement of a kind of file, or ``None`` (additive files have none)."""
    return _STATEMENTS.get(kind)


def derive_decay(variant, proof) -> None:
    """Record the decay derivation of ``variant`` in ``proof`` (see the module docstring)."""
    (_rotary if variant.kind == "rotary" else _bias)(variant, proof)


# -- rotary: RoFormer's bound ------------------------------------------------------------------------


def _abel_identity(n: int, proof) -> None:
    if n > MAX_ABEL_PAIRS:
        proof.note(f"The Abel summation identity behind the bound is not written out for n = {n} pairs "
                   f"(at most {MAX_ABEL_PAIRS}); the verdict rests on B alone.")
        return
    proof.note("RoFormer's bound: with h_k the complex product of pair k of the query and of the key, "
               "z_k = e^{i x_k(D)} and S_r = sum_{k<r} z_k (so z_k = S_{k+1} - S_k, S_0 = 0), Abel summation "
               "gives sum_k h_k z_k = -sum_k S_{k+1} (h_{k+1} - h_k) (h_n = 0), so |score| <= "
               "max_k |h_{k+1} - h_k| * n * B(D) for the rotation R(x).")
    rule = f"Abel summation for n = {n}: sum_k h_k (S_(k+1) - S_k) = -sum_k S_(k+1) (h_(k+1) - h_k), S_0 = h_n = 0"
    verdict = _ABEL_PROOFS.get(n)
    if verdict is None:  # the same statement for every file of n pairs: proved once (a zoo scan has many)
        h = list(sp.symbols(f"h0:{n}")) + [sp.Integer(0)]
        partial = [sp.Integer(0)] + list(sp.symbols(f"S1:{n + 1}"))
        # the partial sums as symbols: 2n terms a side, where writing each S_r out would give n^2
        verdict = prove_equal(sp.Add(*[h[k] * (partial[k + 1] - partial[k]) for k in range(n)]),
                              -sp.Add(*[partial[k + 1] * (h[k + 1] - h[k]) for k in range(n)]), check=False)
        if verdict.proved:
            _ABEL_PROOFS[n] = verdict
    proof.record(rule, verdict)  # its certificate is re-checked with every claim, cached or not


#: the Abel identity's verdict for each n already proved in this process
_ABEL_PROOFS: dict = {}


def _iv_of(value):
    """A real ``mpmath.iv`` enclosure of a ``value_at`` result, or ``None``."""
    if value is None:
        return None
    if isinstance(value, Fraction):
        return iv.mpf(value.numerator) / value.denominator
    re, im = value
    if not (im.a == 0 and im.b == 0):
        return None
    return re


def _rotary(variant, proof) -> None:
    n = variant.n_pairs
    _abel_identity(n, proof)
    omegas = variant.frequencies()  # with a [length] table: a call no longer than its threshold
    digits = variant.frequencies_digits()
    if variant.mixed:  # D on every axis: pair k turns by D * sum_a omega_{k,a}
        omegas = [sp.Add(*row) for row in omegas]
        digits = [sp.Add(*row) for row in digits]
        proof.note("With several axes the distance D is added to every axis, so pair k turns by "
                   "D times the sum of its per-axis frequencies.")
    if variant.length_dependent:
        proof.note("The frequencies are those of a call no longer than the [length] threshold: a rise there "
                   "refutes the statement for every call length.")
    scaled = variant.query_scale is not None or variant.key_scale is not None
    still = variant.transform is not None and "m" not in variant.transform.names
    # a relative position that is 0 at every distance (rho = i * j at the key j = 0)
    resting = variant.relative is not None and variant.relative_at(D, 0) == 0
    if (still or resting or all(w == 0 for w in omegas)) and not scaled:
        # every angle is exactly 0: S_r(D) = c r (c the attention factor squared) for every D
        why = ("the position transform reads no position" if still else
               "the relative position rho(D, 0) is 0 at every distance" if resting else "every frequency is exactly 0")
        proof.check("B(D) < B(0) for some D >= 0", False,
                    f"{why}, so every x_k(D) = 0, e^(i x_k(D)) = 1, S_r(D) = c r and B(D) = c (n + 1)/2 "
                    f"with n = {n} for every D: the bound is constant, it does not decay")
        return
    bound = _RoformerBound(variant, omegas)
    if _constant_bound(bound, proof):
        return
    hints = bound.hints(variant, digits)
    if hints is not None:  # float64 says where B rises: certify those distances (and only those count)
        for d in hints:
            low, high = bound.at(d), bound.at(d + 1)
            if _rises(low, high):
                return _record_rise(proof, d, low, high)
        where = (f"no rise of B in float64 at D < {HINT_OFFSETS} nor at 2000 distances up to 2^20"
                 if not hints else f"no certified rise at the {len(hints)} distances where float64 sees one")
        proof.undecided("check", "a distance D >= 0 with B(D + 1) > B(D)", where, method="witness")
        return
    previous = bound.at(0)
    for d in range(0, SMALL_OFFSETS + 1):
        current = bound.at(d + 1)
        if _rises(previous, current):
            return _record_rise(proof, d, previous, current)
        previous = current
    named = [d for d in _named_distances(variant) if d > SMALL_OFFSETS]
    for d in list(dict.fromkeys(named + list(FAR_OFFSETS))):
        low, high = bound.at(d), bound.at(d + 1)
        if _rises(low, high):
            return _record_rise(proof, d, low, high)
    near = f", near the {len(named)} distances the scale and transform formulas name" if named else ""
    proof.undecided("check", "a distance D >= 0 with B(D + 1) > B(D)",
                    f"no certified rise of B at D = 0..{SMALL_OFFSETS}{near} nor at the powers of two 2^7..2^20",
                    method="witness")


#: most pairs whose partial sums |S_r(D)|^2 the constancy proof writes out (n of them, O(n^2) terms each)
MAX_CONSTANT_PAIRS = 32
#: distances where B is compared with B(0) before the constancy proof is tried
CONSTANT_PROBES = (1, 2, 3)
#: the distance of the constancy proof: every D >= 0
D_NONNEGATIVE = sp.Symbol("D", integer=True, nonnegative=True)


def _constant_bound(bound, proof) -> bool:
    """Refute the second half (``B(D) < B(0)`` for some ``D``) when ``B`` is constant over ``D >= 0``.

    ``B`` is constant exactly when every ``|S_r(D)|`` is (a sum of moduli of which one moved and no other
    moved against it is a coincidence this does not rely on): ``|S_r(D)|^2 = |S_r(0)|^2`` is proved by the
    prover for every ``r``, with ``D`` a non-negative integer, certificates re-checked with the claim.  That
    covers every reason at once: all-zero frequencies, a transform or a clip that saturates on ``D >= 0``,
    constant scales, frequencies that are multiples of ``2 pi``, equal frequencies (every term turns
    together).  Tried only where ``B(D)`` is not certified different from ``B(0)`` at ``D = 1, 2, 3``;
    ``False`` (nothing recorded) when some ``r`` is not proved."""
    if bound.n > MAX_CONSTANT_PAIRS:
        return False
    start = bound.at(0)
    if start is None:
        return False
    for d in CONSTANT_PROBES:
        here = bound.at(d)
        if here is None or here.a > start.b or here.b < start.a:
            return False
    x = D if bound.shift is None else bound.shift
    at = {D: D_NONNEGATIVE}
    amplitudes = bound.amplitudes or [sp.Integer(1)] * bound.n
    terms = [(a.xreplace(at), (x * w).xreplace(at)) for a, w in zip(amplitudes, bound.exact)]
    kept = len(proof.parts)
    re = im = sp.Integer(0)
    for r, (a, angle) in enumerate(terms, start=1):
        re, im = re + a * sp.cos(angle), im + a * sp.sin(angle)
        square = re**2 + im**2
        part = proof.equal(f"|S_{r}(D)|^2 = |S_{r}(0)|^2 for every integer D >= 0", sp.expand(square),
                           sp.expand(square.xreplace({D_NONNEGATIVE: 0})))
        if part.status != PROVED_STATUS:
            del proof.parts[kept:]
            return False
    proof.check("B(D) < B(0) for some D >= 0", False,
                f"|S_r(D)| = |S_r(0)| for every r = 1..{bound.n} and every D >= 0 (proved above), so "
                "B(D) = B(0) for every D: the bound is constant, it does not decay")
    return True


def _named_distances(variant) -> list:
    """The distances where a scale or the position transform may step: around every number their
    formulas name (``where(m + 1 > 8192, ...)`` steps between D = 8191 and 8192), for a query at ``D``
    and a key at 0, read on a few pairs."""
    m = sp.Symbol("m", integer=True)
    formulas = []
    try:
        formulas.append(variant.angle_position(m))
        for k in _spread(variant.n_pairs):
            formulas += [variant.scale("query", m, k), variant.scale("key", m, k)]
    except (VariantFileError, TypeError, ValueError, ArithmeticError):
        pass  # a formula with no value at a symbolic position names nothing here: the scan above still runs
    numbers = {abs(atom) for formula in formulas for atom in formula.atoms(sp.Number)}
    # a step written floor((m + 1) / F) is m/F + 1/F to SymPy: its threshold F is the reciprocal it names
    numbers |= {1 / n for n in numbers if n.is_Rational and 0 < n < 1}
    return [d for d in dict.fromkeys(_near(sorted(numbers))) if d >= 0]


def _rises(before, after) -> bool:
    return before is not None and after is not None and after.a > before.b


def _record_rise(proof, d, before, after) -> None:
    proof.check("B(D + 1) <= B(D) for every D >= 0", False,
                f"B({d + 1}) = {_show(after)} > B({d}) = {_show(before)}: the bound rises (certified by interval "
                f"arithmetic, {PRECISION} bits, from the exact frequencies)", witness={D: sp.Integer(d)})


def _show(x) -> str:
    """The midpoint of an enclosure, 10 digits (for the reader; the comparison used the enclosure)."""
    return mpmath.nstr(mpmath.mpf(x.mid._mpi_[0]), 10)


def _fast_enclosure(value):
    """A real ``iv`` enclosure of an exact frequency: a geometric one, ``q * b**e`` with rational
    ``q, b > 0, e``, straight in mpmath's outward-rounded interval arithmetic (4096 pairs in
    milliseconds); anything else through :func:`enclose`."""
    factors = sp.Mul.make_args(value)
    if all(f.is_Rational or (f.is_Pow and f.base.is_Rational and f.base > 0 and f.exp.is_Rational)
           for f in factors):
        old = iv.prec
        try:
            iv.prec = PRECISION
            out = iv.mpf(1)
            for f in factors:
                if f.is_Rational:
                    out *= iv.mpf(int(f.p)) / int(f.q)
                else:
                    out *= (iv.mpf(int(f.base.p)) / int(f.base.q)) ** (iv.mpf(int(f.exp.p)) / int(f.exp.q))
            return out
        finally:
            iv.prec = old
    return real_enclosure(value, PRECISION)


def _value(expr, point):
    """``value_at`` of ``expr`` at ``point`` with every lookup table first read at its exact index (the
    interval evaluator has no tables: ``P(Min(D, 3))`` in a transform is its entry at each ``D``); ``None``
    where an index is not an integer inside its table."""
    expr = _tables_read(expr, point) if expr.has(LookupBase) else expr
    return None if expr is None else value_at(expr, point, PRECISION)


class _RoformerBound:
    """Certified enclosures of ``B(D)`` at integer ``D``: each frequency enclosed once from its exact
    value, then ``n`` interval cosines and sines per ``D`` (no expression of ``n^2`` terms)."""

    def __init__(self, variant, omegas):
        self.n = len(omegas)
        self.exact = list(omegas)
        self.omegas = [_fast_enclosure(w) for w in omegas]
        self.shift = None if variant.transform is None else \
            mod_as_floor(variant.angle_position(D) - variant.angle_position(0))
        if variant.relative is not None:  # a query at D and a key at 0 turn by rho(D, 0) (ReRoPE, Self-Extend)
            self.shift = mod_as_floor(variant.relative_at(D, 0))
        amplitudes = variant.query_scale is not None or variant.key_scale is not None or variant.factor is not None
        self.amplitudes = None if not amplitudes else \
            [mod_as_floor(variant.scale("query", D, k) * variant.scale("key", 0, k)) for k in range(self.n)]
        # an amplitude that does not move with D (an attention factor alone) is enclosed once
        self.fixed = {k: _iv_of(_value(a, {})) for k, a in enumerate(self.amplitudes or ())
                      if not a.has(D)}

    def hints(self, variant, digits):
        """The first distances where a float64 evaluation of ``B`` rises, smallest first (D < 4096 one by
        one, then 2000 distances spread geometrically up to 2^20); ``None`` when the scales move with
        ``D`` or the transform is not linear (the exact scan alone then)."""
        moving = [a for a in (self.amplitudes or ()) if a.has(D)]
        factor = sp.Integer(1)
        if self.shift is not None:
            if not self.shift.is_polynomial(D) or sp.Poly(self.shift, D).degree() > 1:
                return None
            factor, rest = (sp.Poly(self.shift, D).all_coeffs() + [0])[:2]
            if rest != 0 or not factor.is_Rational:
                return None
        if moving or any(w is None for w in self.omegas):
            return None
        import numpy as np

        w = np.array([float(x) for x in digits]) * float(factor)
        far = np.unique(np.geomspace(HINT_OFFSETS, FAR_OFFSETS[-1], 2000).astype(np.int64))
        distances = np.concatenate([np.arange(HINT_OFFSETS), far])
        rows = max(1, HINT_ENTRIES // (2 * self.n))  # memory: distances x pairs, twice
        rises = []
        with np.errstate(all="ignore"):
            for start in range(0, len(distances), rows):
                d = distances[start:start + rows]
                here, after = (np.abs(np.cumsum(np.exp(1j * np.outer(e, w)), axis=1)).mean(axis=1)
                               for e in (d, d + 1))
                rises += [int(x) for x in d[after - here > 1e-9 * (1 + here)]]
                if len(rises) >= MAX_HINTS:
                    break
        return rises[:MAX_HINTS]

    def at(self, d: int):
        """An ``iv`` enclosure of ``B(d)``, or ``None`` where some term cannot be certified."""
        if any(w is None for w in self.omegas):
            return None
        old = iv.prec
        try:
            iv.prec = PRECISION
            g = iv.mpf(d) if self.shift is None else _iv_of(_value(self.shift, {D: sp.Integer(d)}))
            if g is None:
                return None
            re = im = total = iv.mpf(0)
            _budget.check(self.n)  # one step per pair summed: the property's step budget bounds the search
            for k, w in enumerate(self.omegas):
                a = iv.mpf(1) if self.amplitudes is None else self.fixed[k] if k in self.fixed else \
                    _iv_of(_value(self.amplitudes[k], {D: sp.Integer(d)}))
                if a is None:
                    return None
                x = g * w
                re, im = re + a * iv.cos(x), im + a * iv.sin(x)
                square = re**2 + im**2
                total += iv.sqrt(iv.mpf([max(square.a, 0), square.b]))
            return total / self.n
        except (ValueError, ZeroDivisionError, OverflowError, ArithmeticError):
            return None
        finally:
            iv.prec = old


# -- bias: monotonicity rules, or a certified rise -----------------------------------------------------


class _Unknown(Exception):
    """The monotonicity rules do not decide a node (the message says which and why)."""


INC, DEC, CONST = "non-decreasing", "non-increasing", "constant"
_FLIP = {INC: DEC, DEC: INC, CONST: CONST}


def _rational(raw):
    if raw in (finf, fninf, fnan):
        return sp.oo if raw == finf else (-sp.oo if raw == fninf else None)
    p, q = to_rational(raw)
    return sp.Rational(p, q)


def _bound(value, side: str):
    """``value`` (a closed number, possibly infinite) as an exact rational bound, rounded outward
    (``side`` ``"lo"`` or ``"hi"``) from a certified enclosure when it is not rational."""
    value = sp.sympify(value)
    if value.is_Rational or value in (sp.oo, -sp.oo):
        return value
    if value.is_Float:
        return sp.Rational(value)
    if value.has(sp.nan, sp.zoo) or value.free_symbols:
        raise _Unknown(f"the bound {sp.sstr(value)[:60]} is not a number")
    enclosure = real_enclosure(value, PRECISION)
    if enclosure is None:
        raise _Unknown(f"{sp.sstr(value)[:60]} has no certified real enclosure")
    out = _rational(enclosure._mpi_[0] if side == "lo" else enclosure._mpi_[1])
    if out is None:
        raise _Unknown(f"{sp.sstr(value)[:60]} has no finite enclosure")
    return out


def _times(a, b):
    """A product of bounds, ``0 * oo = 0`` (every value is finite: only its bound is infinite)."""
    return sp.Integer(0) if a == 0 or b == 0 else a * b


class _Range:
    __slots__ = ("way", "lo", "hi", "integer")

    def __init__(self, way, lo, hi, integer=False):
        if lo.has(sp.nan) or hi.has(sp.nan):
            raise _Unknown("a range bound is undefined (oo - oo)")
        self.way, self.lo, self.hi, self.integer = way, lo, hi, integer


class _Monotone:
    """Direction and exact range of an expression in ``D`` over the real interval ``[lo, hi]``.

    Monotone over the reals implies monotone over the integers in it; ranges are hulls with
    rational (or infinite) ends, rounded outward, so every comparison between them is exact.
    Every other symbol is a parameter, constant in ``D``, with a given range.  A rule that does
    not apply raises :class:`_Unknown`: nothing is guessed, and an expression that might be
    undefined somewhere on the interval (``log`` of a value reaching 0) is not decided."""

    def __init__(self, parameters: dict):
        self.parameters = parameters  # symbol -> (lo, hi, integer)

    def run(self, expr, lo=sp.Integer(0), hi=sp.oo) -> _Range:
        return self.visit(sp.sympify(expr), (lo, hi))

    def visit(self, node, domain) -> _Range:
        if node.is_number:
            return self._number(node)
        if node == D:
            return _Range(INC, domain[0], domain[1], True)
        if node.is_Symbol:
            if node not in self.parameters:
                raise _Unknown(f"the name {node} has no known range")
            lo, hi, integer = self.parameters[node]
            return _Range(CONST, lo, hi, integer)
        handler = _RULES.get(type(node))
        if handler is None:
            for cls, rule in _RULES.items():
                if isinstance(node, cls):
                    handler = rule
                    break
        if handler is None:
            raise _Unknown(f"{type(node).__name__} is not one of the monotone functions the rules know")
        return handler(self, node, domain)

    def _number(self, node) -> _Range:
        return _Range(CONST, _bound(node, "lo"), _bound(node, "hi"), bool(node.is_Integer))

    def add(self, node, domain):
        parts = [self.visit(a, domain) for a in node.args]
        way = _combine([p.way for p in parts])
        return _Range(way, sp.Add(*[p.lo for p in parts]), sp.Add(*[p.hi for p in parts]),
                      all(p.integer for p in parts))

    def mul(self, node, domain):
        result = self.visit(node.args[0], domain)
        for arg in node.args[1:]:
            result = _product(result, self.visit(arg, domain))
        return result

    def power(self, node, domain):
        base, exponent = node.args
        if not exponent.has(D) and exponent.is_number:
            b = self.visit(base, domain)
            p = exponent
            if p.is_Integer and p > 0:
                if p % 2 == 1 or b.lo >= 0:
                    ends = (_bound(sp.Pow(b.lo, p), "lo"), _bound(sp.Pow(b.hi, p), "hi"))
                    return _Range(b.way, *ends, b.integer)
                if b.hi <= 0:
                    ends = (_bound(sp.Pow(b.hi, p), "lo"), _bound(sp.Pow(b.lo, p), "hi"))
                    return _Range(_FLIP[b.way], *ends, b.integer)
                raise _Unknown(f"an even power of a value that changes sign ({sp.sstr(base)[:40]})")
            if not (b.lo >= 0 if p > 0 else b.lo > 0):  # x**0.5 is defined at 0, x**-1 is not
                raise _Unknown(f"a power {sp.sstr(p)} of a value that may reach {'below 0' if p > 0 else '0'} "
                               f"({sp.sstr(base)[:40]})")
            if p > 0:
                return _Range(b.way, _bound(sp.Pow(b.lo, p), "lo"), _bound(sp.Pow(b.hi, p), "hi"))
            return _Range(_FLIP[b.way], _bound(sp.Pow(b.hi, p), "lo"), _bound(sp.Pow(b.lo, p), "hi"))
        if base.is_number:
            e = self.visit(exponent, domain)
            b = _bound(base, "lo")
            if not b > 0:
                raise _Unknown(f"a power of the base {sp.sstr(base)[:40]}, not certified positive")
            if base == 1:
                return _Range(CONST, sp.Integer(1), sp.Integer(1), True)
            rising = _bound(base, "lo") > 1
            if not rising and not _bound(base, "hi") < 1:
                raise _Unknown(f"the base {sp.sstr(base)[:40]} is not certified above or below 1")
            ends = (sp.Pow(base, e.lo), sp.Pow(base, e.hi)) if rising else (sp.Pow(base, e.hi), sp.Pow(base, e.lo))
            return _Range(e.way if rising else _FLIP[e.way], _bound(ends[0], "lo"), _bound(ends[1], "hi"))
        raise _Unknown(f"a power whose base and exponent both vary ({sp.sstr(node)[:40]})")

    def monotone_function(self, node, domain):
        (arg,) = node.args
        a = self.visit(arg, domain)
        func = type(node)
        if func is sp.log and not a.lo > 0:
            raise _Unknown(f"log of {sp.sstr(arg)[:40]}, which may reach 0 or below at some D >= 0")
        return _Range(a.way, _bound(func(a.lo), "lo"), _bound(func(a.hi), "hi"), func in (sp.floor, sp.ceiling))

    def absolute(self, node, domain):
        a = self.visit(node.args[0], domain)
        if a.lo >= 0:
            return a
        if a.hi <= 0:
            return _Range(_FLIP[a.way], -a.hi, -a.lo, a.integer)
        raise _Unknown(f"abs of {sp.sstr(node.args[0])[:40]}, which changes sign over D >= 0")

    def extremum(self, node, domain):
        parts = [self.visit(a, domain) for a in node.args]
        way = _combine([p.way for p in parts])
        pick = min if isinstance(node, sp.Min) else max
        return _Range(way, pick(p.lo for p in parts), pick(p.hi for p in parts), all(p.integer for p in parts))

    def periodic(self, node, domain):
        if node.args[0].has(D):
            raise _Unknown(f"{type(node).__name__} of {sp.sstr(node.args[0])[:40]}, which moves with D, is not "
                           "monotone in general")
        self.visit(node.args[0], domain)  # defined: its parameters have ranges
        if isinstance(node, sp.tan):
            raise _Unknown("tan of a parameter has no bounded range")
        return _Range(CONST, sp.Integer(-1), sp.Integer(1))

    def piecewise(self, node, domain):
        (first, condition), rest = node.args[0], node.args[1:]
        other = rest[0].expr if len(rest) == 1 and rest[0].cond == sp.true else sp.Piecewise(*rest)
        if condition == sp.true:
            return self.visit(first, domain)
        if not isinstance(condition, sp.core.relational.Relational):
            raise _Unknown(f"the condition {sp.sstr(condition)[:40]} is not one comparison")
        w = self.visit(condition.lhs - condition.rhs, domain)
        always = _decided(type(condition), w)
        if always is not None:
            return self.visit(first if always else other, domain)
        line = sp.Poly(condition.lhs - condition.rhs, D) if (condition.lhs - condition.rhs).is_polynomial(D) else None
        if line is None or line.degree() != 1 or not all(c.is_Rational for c in line.all_coeffs()):
            raise _Unknown(f"the condition {sp.sstr(condition)[:40]} has no threshold linear in D")
        slope, offset = line.all_coeffs()
        cut, left_holds = _integer_cut(type(condition), slope, offset, condition)
        # D is an integer: the condition holds on the integers up to ``cut`` (left_holds) or from cut + 1, and
        # each piece is read over the real interval between its integer ends, where the condition is the
        # same as at its integers (a branch defined only where its condition holds is read only there)
        left, right = (first, other) if left_holds else (other, first)
        if cut < domain[0]:
            return self.visit(right, domain)
        if cut + 1 > domain[1]:
            return self.visit(left, domain)
        a = self.visit(left, (domain[0], cut))
        b = self.visit(right, (cut + 1, domain[1]))
        ways = {a.way, b.way} - {CONST}
        if not ways and a.lo == a.hi == b.lo == b.hi:
            way = CONST
        elif ways <= {DEC} and a.lo >= b.hi:
            way = DEC
        elif ways <= {INC} and a.hi <= b.lo:
            way = INC
        else:
            raise _Unknown(f"where({sp.sstr(condition)[:40]}, ...) jumps against the direction of its pieces")
        return _Range(way, min(a.lo, b.lo), max(a.hi, b.hi), a.integer and b.integer)

    def table(self, node, domain):
        (arg,) = node.args
        index = self.visit(arg, domain)
        name, values = type(node).table_name, type(node).values
        if not index.integer:
            raise _Unknown(f"the index of table {name!r} is not shown to be an integer")
        first, last = sp.ceiling(index.lo), sp.floor(index.hi)
        if not (first.is_Integer and last.is_Integer and 0 <= first <= last < len(values)):
            raise _Unknown(f"the index of table {name!r} ranges over [{index.lo}, {index.hi}], not inside "
                           f"0..{len(values) - 1}")
        reached = [sp.sympify(v) for v in values[int(first):int(last) + 1]]
        if not all(v.is_Rational or v.is_Float for v in reached):
            raise _Unknown(f"table {name!r} has entries that are not exact numbers")
        entries = [sp.Rational(v) for v in reached]  # a Float is its binary value, exactly
        falling = all(b <= a for a, b in zip(entries, entries[1:]))
        rising = all(b >= a for a, b in zip(entries, entries[1:]))
        if index.way == CONST or (falling and rising):
            way = CONST
        elif falling:
            way = _FLIP[index.way]
        elif rising:
            way = index.way
        else:
            raise _Unknown(f"table {name!r} is not monotone over its entries {int(first)}..{int(last)}, "
                           "the ones the index reaches")
        return _Range(way, min(entries), max(entries), all(v.is_Integer for v in entries))


def _integer_cut(relation, slope, offset, condition) -> tuple:
    """``slope * D + offset REL 0`` over the integers ``D``: ``(cut, left_holds)``, the condition holding
    exactly at the integers ``D <= cut`` (``left_holds``) or exactly at ``D >= cut + 1`` (exact rationals)."""
    flipped = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
               sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}
    if relation not in flipped:
        raise _Unknown(f"the condition {sp.sstr(condition)[:40]} is an equality")
    if slope < 0:  # dividing by a negative slope turns the comparison round
        relation = flipped[relation]
    threshold = -offset / slope  # the condition is D REL threshold
    if relation is sp.StrictGreaterThan:
        return sp.floor(threshold), False
    if relation is sp.GreaterThan:
        return sp.ceiling(threshold) - 1, False
    if relation is sp.StrictLessThan:
        return sp.ceiling(threshold) - 1, True
    return sp.floor(threshold), True


def _combine(ways) -> str:
    moving = set(ways) - {CONST}
    if len(moving) > 1:
        raise _Unknown("a sum or an extremum of a rising and a falling part")
    return moving.pop() if moving else CONST


def _product(a: _Range, b: _Range) -> _Range:
    corners = [_times(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    lo, hi, integer = min(corners), max(corners), a.integer and b.integer
    if a.way == CONST or b.way == CONST:
        fixed, moving = (a, b) if a.way == CONST else (b, a)
        if moving.way == CONST:
            return _Range(CONST, lo, hi, integer)
        if fixed.lo >= 0:
            return _Range(moving.way, lo, hi, integer)
        if fixed.hi <= 0:
            return _Range(_FLIP[moving.way], lo, hi, integer)
        raise _Unknown("a factor whose sign is not fixed multiplies a part that moves with D")
    if a.way == b.way and a.lo >= 0 and b.lo >= 0:
        return _Range(a.way, lo, hi, integer)
    raise _Unknown("a product of two parts that move with D, not both non-negative and in the same direction")


def _decided(relation, w: _Range):
    """Whether ``w REL 0`` holds at every point (True), at none (False), or depends (None)."""
    if relation is sp.StrictLessThan:
        return True if w.hi < 0 else (False if w.lo >= 0 else None)
    if relation is sp.LessThan:
        return True if w.hi <= 0 else (False if w.lo > 0 else None)
    if relation is sp.StrictGreaterThan:
        return True if w.lo > 0 else (False if w.hi <= 0 else None)
    if relation is sp.GreaterThan:
        return True if w.lo >= 0 else (False if w.hi < 0 else None)
    if relation is sp.Equality:
        return False if (w.lo > 0 or w.hi < 0) else (True if w.lo == w.hi == 0 else None)
    if relation is sp.Unequality:
        return True if (w.lo > 0 or w.hi < 0) else (False if w.lo == w.hi == 0 else None)
    return None


_RULES = {
    sp.Add: _Monotone.add, sp.Mul: _Monotone.mul, sp.Pow: _Monotone.power,
    sp.exp: _Monotone.monotone_function, sp.log: _Monotone.monotone_function,
    sp.floor: _Monotone.monotone_function, sp.ceiling: _Monotone.monotone_function,
    sp.Abs: _Monotone.absolute, sp.Min: _Monotone.extremum, sp.Max: _Monotone.extremum,
    sp.cos: _Monotone.periodic, sp.sin: _Monotone.periodic, sp.tan: _Monotone.periodic,
    sp.Piecewise: _Monotone.piecewise, LookupBase: _Monotone.table,
}


def _tables_read(expr, point):
    """``expr`` with every lookup table replaced by the entry it reads at ``point`` (innermost first),
    or ``None`` when an index is not exactly an integer inside its table there (the interval
    evaluator has no tables: their index must be exact)."""
    while True:
        nodes = [t for t in expr.atoms(LookupBase) if not t.args[0].has(LookupBase)]
        if not nodes:
            return expr
        entries = {}
        for node in nodes:
            try:
                index = _exact(node.args[0], point)
            except (ValueError, TypeError, ZeroDivisionError, ArithmeticError):
                return None
            values = type(node).values
            if not (index.is_Integer and 0 <= index < len(values)):
                return None
            entries[node] = values[int(index)]
        expr = expr.xreplace(entries)


def _exact(node, point):
    """The exact value of a table's index at ``point``: SymPy's own exact arithmetic, node by node, a
    ``where`` building only the branch its condition takes (``floor(log(2/2))`` is the integer 0, which
    an enclosure of width 0 at an integer cannot say)."""
    if node in point:
        return sp.sympify(point[node])
    if not node.args:
        return node
    if isinstance(node, sp.Piecewise):
        for expr, condition in node.args:
            decided = condition if condition in (sp.true, sp.false) else _exact(condition, point)
            if decided == sp.true:
                return _exact(expr, point)
            if decided != sp.false:
                raise ValueError(f"the condition {condition} is not decided at {point}")
        raise ValueError("no branch of a where() is taken")
    value = node.func(*[_exact(a, point) for a in node.args])
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"{node} is undefined at {point}")
    return value


def _positive(expr, point) -> bool:
    """``expr`` at ``point`` is certainly > 0, every subterm defined (exact or interval)."""
    expr = _tables_read(expr, point)
    if expr is None:
        return False
    for precision in (64, 256):
        value = value_at(expr, point, precision)
        if isinstance(value, Fraction):
            return value > 0
        enclosure = _iv_of(value)
        if enclosure is not None and enclosure.a > 0:
            return True
    return False


def _spread(count: int) -> list:
    return list(dict.fromkeys([0, count - 1, count // 2, count // 4]))[:MAX_WITNESS_HEADS]


def _distances(expr) -> list:
    """Distances tried for a rise: 0..SMALL_OFFSETS, the neighbours of every number the formula
    names, then the powers of two."""
    near = _near(expr.atoms(sp.Number))
    return list(dict.fromkeys(list(range(SMALL_OFFSETS + 1)) + near + list(FAR_OFFSETS)))


def _near(numbers) -> list:
    """The integer neighbours of every number of ``numbers`` between 2 and 2^20 (a step or a clip at
    ``c`` shows between ``c - 2`` and ``c + 1``), in the order the numbers come."""
    near = []
    for number in numbers:
        if 2 <= abs(number) <= 2**20:
            base = int(sp.floor(abs(number)))
            near += [base - 2, base - 1, base, base + 1]
    return near


def _bias(variant, proof) -> None:
    past = mod_as_floor(variant.bias_at(i, i - D, slope_sym, h_sym))  # the key D steps before the query
    slopes = variant.slopes()
    nonnegative = variant.from_zero
    proof.note("b(i, i - D) is the bias of the key D steps before the query i; the rules read it over the real "
               "distances D >= 0 (monotone there, monotone at the integers), every other name a parameter.")
    queries = (sp.Integer(0) if nonnegative else -sp.oo, sp.oo, True)
    failure = ""
    try:
        span = [(_bound(s, "lo"), _bound(s, "hi")) for s in slopes]
        parameters = {slope_sym: (min(a for a, _ in span), max(b for _, b in span), False),
                      h_sym: (sp.Integer(0), sp.Integer(variant.heads - 1), True), i: queries}
        # |D| = D on D >= 0 (an identity there, not a simplification): the distance as the rules read it
        result = _Monotone(parameters).run(past.xreplace({sp.Abs(D): D}))
    except _Unknown as why:
        result, failure = None, str(why)
    if result is not None and result.way in (DEC, CONST):
        proof.check("b(i, i - D - 1) <= b(i, i - D) for every D >= 0, query i and head (monotonicity rules)", True,
                    f"b(i, i - D) is {result.way} in D over D >= 0, its range [{_brief(result.lo)}, "
                    f"{_brief(result.hi)}], for slopes in [{_brief(parameters[slope_sym][0])}, "
                    f"{_brief(parameters[slope_sym][1])}] and heads 0..{variant.heads - 1}")
        _every_head_falls(variant, proof, past, slopes, queries)
        return
    # head by head: each head's own slope and table entries, where the hull over the heads says nothing
    heads = [(h, past.xreplace({slope_sym: slopes[h], h_sym: sp.Integer(h)})) for h in range(variant.heads)]
    ranges, open_heads = {}, []
    for h, at_head in heads:
        _budget.check(1)
        ranges[h] = _head_range(at_head, queries)
        if ranges[h] is None or ranges[h].way not in (DEC, CONST):
            open_heads.append((h, at_head))
    if not open_heads:
        proof.check("b(i, i - D - 1) <= b(i, i - D) for every D >= 0, query i and head (monotonicity rules, "
                    "head by head)", True,
                    f"in each of the {variant.heads} heads, with its own slope and entries, b(i, i - D) is "
                    "non-increasing (or constant) in D over D >= 0",
                    data=[f"h={h}: {ranges[h].way}, [{_brief(ranges[h].lo)}, {_brief(ranges[h].hi)}]"
                          for h in range(min(variant.heads, 16))])
        _every_head_falls(variant, proof, past, slopes, queries, ranges)
        return
    searched = open_heads[:MAX_SEARCHED_HEADS]
    for h, at_head in searched:
        # b(i, i - D2) - b(i, i - D): at D2 = D + 1, the key one step further back against the key D back
        rise = at_head.xreplace({D: D2}) - at_head
        # the query with the farther key at 0 at every distance, then (every integer a position) the query
        # as far before 0
        for side in (1,) if nonnegative else (1, -1):
            for d in _distances(at_head):
                q = side * (d + 1)
                if _positive(rise, {i: sp.Integer(q), D: sp.Integer(d), D2: sp.Integer(d + 1)}):
                    proof.check("b(i, i - D - 1) <= b(i, i - D) for every D >= 0, query i and head", False,
                                f"head h = {h}: b({q}, {q - d - 1}) > b({q}, {q - d}), the key D + 1 = {d + 1} "
                                f"steps back scores higher than the key D = {d} steps back (certified)",
                                witness={h_sym: sp.Integer(h), i: sp.Integer(q), D: sp.Integer(d)})
                    return
    undefined = "" if _defined_at_zero(past, slopes) else \
        "; b(i, i - D) is not defined at D = 0 (the key at the query's own position)"
    names = ", ".join(str(h) for h, _ in open_heads[:8]) + (", ..." if len(open_heads) > 8 else "")
    more = f" (searched in the first {len(searched)} of them)" if len(searched) < len(open_heads) else ""
    proof.undecided("check", "b(i, i - D - 1) <= b(i, i - D) for every D >= 0, query i and head",
                    f"the monotonicity rules do not decide it ({failure or 'the bias rises with D'}; taken head "
                    f"by head, not in heads {names}) and no rise was certified in those heads{more} at D = "
                    f"0..{SMALL_OFFSETS}, "
                    f"near the formula's numbers or at powers of two{undefined}", method="witness")


#: most heads a rise is searched in, once the rules leave them open (in head order)
MAX_SEARCHED_HEADS = 16


def _head_range(at_head, queries):
    """The rules' direction and range of one head's ``b(i, i - D)`` over ``D >= 0``, or ``None``."""
    try:
        return _Monotone({i: queries}).run(at_head.xreplace({sp.Abs(D): D}))
    except _Unknown:
        return None


def _brief(bound) -> str:
    """A bound for the reader: exact when short, else 8 digits (an outward-rounded rational has 20)."""
    text = sp.sstr(bound)
    return text if len(text) <= 12 else sp.sstr(sp.N(bound, 8))


def _defined_at_zero(past, slopes) -> bool:
    at_zero = past.xreplace({slope_sym: slopes[0], h_sym: sp.Integer(0)})
    return value_at(at_zero, {i: sp.Integer(1), D: sp.Integer(0)}) is not None


def _every_head_falls(variant, proof, past, slopes, queries, ranges=None) -> None:
    """The second half: in every head some distance scores below distance 0."""
    found = []
    for h in range(variant.heads):
        at_head = past.xreplace({slope_sym: slopes[h], h_sym: sp.Integer(h)})
        if not at_head.has(D):
            proof.check("in every head b(i, i - D) < b(i, i) for some D", False,
                        f"head h = {h}: b(i, i - D) = {sp.sstr(at_head)[:80]} does not read D: the bias is constant "
                        "along the row, it does not decay")
            return
        _budget.check(1)
        rule = (ranges or {}).get(h) or _head_range(at_head, queries)
        if rule is not None and (rule.way == CONST or rule.lo == rule.hi):
            # the rules' CONST is exact (no part moves with D), and a range of one value is one value
            proof.check("in every head b(i, i - D) < b(i, i) for some D", False,
                        f"head h = {h}: b(i, i - D) is constant in D over D >= 0 (monotonicity rules: "
                        f"{rule.way}, range [{_brief(rule.lo)}, {_brief(rule.hi)}]): the bias does not fall along "
                        "the row, it does not decay")
            return
        fall = at_head.xreplace({D: D2}) - at_head  # b(i, i - D2) - b(i, i - D) at D2 = 0
        for d in FALL_OFFSETS:
            if _positive(fall, {i: sp.Integer(d), D: sp.Integer(d), D2: sp.Integer(0)}):
                found.append((h, d))
                break
        else:
            proof.undecided("check", "in every head b(i, i - D) < b(i, i) for some D",
                            f"head h = {h}: no certified fall below b(i, i) at D in {list(FALL_OFFSETS)}",
                            method="witness")
            return
    proof.check("in every head b(i, i - D) < b(i, i) for some D", True,
                f"b(D, 0) < b(D, D) certified in each of the {variant.heads} heads, at D = "
                + ", ".join(str(d) for d in sorted({d for _, d in found})),
                data=[f"h={h}: D={d}" for h, d in found[:16]])
