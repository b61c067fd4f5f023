"""Certified enclosures of the matrix exponential of a rational matrix, in exact rational arithmetic.

``exp(X)`` of a rational matrix is not rational in general (a rotation by an irrational angle), so a
witness that two products of exponentials differ cannot be an exact value.  It is an exact *enclosure*:
the Taylor polynomial ``S_K(X) = sum_{k<K} X^k / k!`` computed exactly (integers over one common
denominator), and the tail bounded exactly,

    || exp(X) - S_K(X) ||_inf <= sum_{k>=K} s^k / k! <= s^K / K! * 1 / (1 - s / (K + 1)),   s = ||X||_inf,

for ``K + 1 > s`` (each tail term is at most ``s / (K + 1)`` times the previous one).  The max-row-sum
norm bounds every entry, so each entry of ``exp(X)`` lies within that radius of the entry of ``S_K``.
Products, transposes and differences of enclosed matrices keep an exact entrywise radius
(:class:`Enclosed`); an entry whose centre is farther from 0 than its radius is certified nonzero.
Nothing here is a floating-point evaluation: every number is a :class:`fractions.Fraction`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import factorial

__all__ = ["Enclosed", "exp_enclosure", "MAX_NORM", "TAIL"]

#: the largest ||X||_inf enclosed: the Taylor degree grows with it (K > e s terms), and witnesses are
#: sought at small positions, where ||X|| is a few times the generators' norm
MAX_NORM = Fraction(48)
#: the tail bound each enclosure reaches (far below any entry a witness rests on)
TAIL = Fraction(1, 2**80)


@dataclass(frozen=True)
class Enclosed:
    """A matrix known entrywise: every entry lies within ``radius`` of the entry of ``center``."""

    center: tuple  # rows of Fractions
    radius: Fraction

    @property
    def size(self) -> int:
        return len(self.center)

    @classmethod
    def exact(cls, rows) -> "Enclosed":
        return cls(tuple(tuple(Fraction(x) for x in row) for row in rows), Fraction(0))

    @classmethod
    def identity(cls, n: int) -> "Enclosed":
        return cls.exact([[int(a == b) for b in range(n)] for a in range(n)])

    @property
    def T(self) -> "Enclosed":
        return Enclosed(tuple(zip(*self.center)), self.radius)

    def __sub__(self, other: "Enclosed") -> "Enclosed":
        return Enclosed(tuple(tuple(a - b for a, b in zip(ra, rb)) for ra, rb in zip(self.center, other.center)),
                        self.radius + other.radius)

    def __matmul__(self, other: "Enclosed") -> "Enclosed":
        """``(A0 + E)(B0 + F) = A0 B0 + E B0 + A0 F + E F``: entry (k, l) of the last three is at most
        ``r_E sum_p |B0_pl| + r_F sum_p |A0_kp| + n r_E r_F``; the largest over (k, l) is the radius."""
        n = len(other.center)
        columns = tuple(zip(*other.center))
        center = tuple(tuple(sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in columns)
                       for row in self.center)
        row_sums = [sum((abs(a) for a in row), Fraction(0)) for row in self.center]
        column_sums = [sum((abs(b) for b in col), Fraction(0)) for col in columns]
        radius = (self.radius * max(column_sums, default=Fraction(0)) + other.radius * max(row_sums, default=Fraction(0))
                  + n * self.radius * other.radius)
        return Enclosed(center, radius)

    def entry(self, k: int, l: int) -> tuple:
        """``(centre, radius)`` of entry (k, l)."""
        return self.center[k][l], self.radius

    def certainly_nonzero(self, k: int, l: int) -> bool:
        return abs(self.center[k][l]) > self.radius


def _norm(rows) -> Fraction:
    return max((sum((abs(x) for x in row), Fraction(0)) for row in rows), default=Fraction(0))


def _tail(s: Fraction, terms: int) -> Fraction:
    """``s^K / K! / (1 - s / (K + 1))`` for ``K = terms`` (needs ``K + 1 > s``)."""
    return s**terms / factorial(terms) / (1 - s / (terms + 1))


def exp_enclosure(rows) -> Enclosed | None:
    """An :class:`Enclosed` of ``exp(X)`` for the rational matrix ``rows`` (Fractions or ints), with a
    radius at most :data:`TAIL`; ``None`` when ``||X||_inf`` exceeds :data:`MAX_NORM`."""
    x = [[Fraction(v) for v in row] for row in rows]
    n, s = len(x), _norm(x)
    if s > MAX_NORM:
        return None
    terms = max(int(2 * s) + 2, 2)
    while _tail(s, terms) > TAIL:
        terms += 1
    # X = N / q with N an integer matrix: sum_{k<K} N^k / (q^k k!) over the common denominator q^(K-1) (K-1)!
    q = 1
    for row in x:
        for v in row:
            q = q * v.denominator // _gcd(q, v.denominator)
    whole = [[int(v * q) for v in row] for row in x]
    power = [[int(a == b) for b in range(n)] for a in range(n)]
    last = terms - 1
    total = [[0] * n for _ in range(n)]
    for k in range(terms):
        weight = q**(last - k) * (factorial(last) // factorial(k))
        for a in range(n):
            for b in range(n):
                total[a][b] += power[a][b] * weight
        power = [[sum(power[a][p] * whole[p][b] for p in range(n)) for b in range(n)] for a in range(n)]
    denominator = q**last * factorial(last)
    center = tuple(tuple(Fraction(v, denominator) for v in row) for row in total)
    return Enclosed(center, _tail(s, terms))


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
