"""How a result shows in a notebook, without the layer that computes it importing the layer that shows it.

A result class (``Verdict`` in the prover, ``ClaimResult`` in claims,
``AuditResult`` in the audit) answers Jupyter's ``_repr_html_`` and
``_repr_markdown_`` by calling :func:`show`; the face registers the function
that renders them (:mod:`symproof._face._notebook`) when ``symproof`` is
imported, which Python does before any of its submodules.  Nothing is
registered, and ``show`` answers ``None`` (Jupyter then prints the ``repr``),
only for a class used after its module was loaded by hand without its package.
"""

from __future__ import annotations

__all__ = ["register", "show"]

_renderer: list = []


def register(renderer) -> None:
    """Make ``renderer(result, format)`` the notebook view (``format``: ``"html"`` or ``"markdown"``)."""
    _renderer[:] = [renderer]


def show(result, format: str):
    """The notebook view of ``result`` in ``format``, or ``None`` when nothing is registered."""
    return _renderer[0](result, format) if _renderer else None
