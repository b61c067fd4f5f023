"""Sphinx configuration: Furo theme, MyST Markdown pages, reference tables generated from the code.

Build (the command .ci/run uses): ``sphinx-build -W -n --keep-going -b html docs docs/_build/html``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's symproof, not an installed copy
sys.path.insert(0, str(HERE / "_ext"))

import symproof  # noqa: E402

project = "symproof"
author = "the symproof authors"
copyright = "the symproof authors, BSD-3-Clause"
release = version = symproof.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "symproof_docs",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
# pypi.md is the package index's long description (pyproject.toml's readme), not a page of the site
exclude_patterns = ["_build", "incoming", "README.md", "pypi.md"]
myst_enable_extensions = ["dollarmath", "deflist", "colon_fence"]
myst_heading_anchors = 3

html_theme = "furo"
html_math_renderer = "mathml"  # docs/_ext/symproof_docs.py: MathML printed at build time
html_title = f"symproof {release}"
html_static_path = ["_static"]
html_css_files = ["symproof.css"]
html_extra_path = []  # the chapter report is linked from reference/report, copied by symproof_docs

autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
# Type hints name classes of SymPy, NumPy and the standard library that these pages do not document.
nitpick_ignore_regex = [
    ("py:class", r"(sympy|numpy|np|sp|torch|collections|typing|pathlib|os)\b.*"),
    ("py:class", r"(Callable|Mapping|Sequence|Iterable|Any|optional|Path|PathLike|Expr|Matrix|Basic)"),
    ("py:obj", r"(sympy|numpy)\..*"),
    # Docstrings name private helpers and submodule paths (the code's own cross-references); these pages
    # document the public surface only, so such a target has no page. A broken reference to a public
    # name (symproof.X) or to a page is still an error.
    ("py:.*", r"symproof\.(checker|claims|variants|models|kernels|prover|encodings|report|_\w+)\..*"),
    ("py:.*", r"symproof\.checker"),
    ("py:.*", r"(?!symproof\.)[A-Za-z_][\w.]*"),
    ("py:.*", r".* .*"),
]
