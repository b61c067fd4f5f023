"""The Jinja2 environments of the two report formats (templates in ``templates/``)."""

from __future__ import annotations

import jinja2

__all__ = ["environment"]

#: LaTeX is full of ``{`` and ``%``, so its templates use delimiters that never occur in TeX
_LATEX_SYNTAX = dict(
    block_start_string="((*", block_end_string="*))",
    variable_start_string="(((", variable_end_string=")))",
    comment_start_string="((=", comment_end_string="=))",
    line_statement_prefix=None, line_comment_prefix=None,
)


def environment(kind: str) -> jinja2.Environment:
    """A strict environment: an undefined name in a template is an error, not an empty string."""
    options = dict(
        loader=jinja2.PackageLoader("symproof.report", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    if kind == "latex":
        return jinja2.Environment(autoescape=False, **_LATEX_SYNTAX, **options)
    return jinja2.Environment(autoescape=True, **options)
