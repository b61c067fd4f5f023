"""One exception family for everything symproof refuses to do.

Every error names what was being checked (the claim and step, when there is
one), the offending input, and what was expected instead, so that a user never
has to read a traceback from inside SymPy to know what went wrong.
"""

from __future__ import annotations

__all__ = [
    "SymproofError",
    "InvalidInputError",
    "UndefinedExpressionError",
    "PositionOutOfRangeError",
    "MaskedRowError",
    "VariantFileError",
    "CertificateError",
]


class SymproofError(Exception):
    """Base class of every error symproof raises on purpose.

    ``context`` holds the claim ID, the step and the bound values that were in
    force; they are shown after the message.
    """

    def __init__(self, message: str, **context: object) -> None:
        self.message = message
        self.context = {k: v for k, v in context.items() if v is not None}
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.context:
            return self.message
        where = "; ".join(f"{key}: {value}" for key, value in self.context.items())
        return f"{self.message} [{where}]"

    def with_context(self, **context: object) -> "SymproofError":
        """Return a copy of this error with more context (outer context last)."""
        merged = {**self.context, **{k: v for k, v in context.items() if k not in self.context}}
        clone = type(self).__new__(type(self))
        SymproofError.__init__(clone, self.message, **merged)
        return clone


class InvalidInputError(SymproofError, ValueError):
    """An argument has the wrong type, shape or value (odd width, unknown pairing...)."""


class UndefinedExpressionError(SymproofError, ValueError):
    """An expression is undefined (a division by zero, ``nan``, ``zoo``)."""


class PositionOutOfRangeError(InvalidInputError, IndexError):
    """A position has no entry in a finite table (a learned position table)."""


class MaskedRowError(UndefinedExpressionError):
    """An attention row has no allowed position, so its normalisation is undefined."""


class VariantFileError(InvalidInputError):
    """A variant description file is malformed: unknown key, wrong type, bad formula."""


class CertificateError(SymproofError):
    """A proof certificate does not re-check (the checker rejects it, and says why)."""
