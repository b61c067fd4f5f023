"""flash-attn 2.8.3 (PyPI sdist): only the files the rotary layer needs, verbatim (BSD-3-Clause, LICENSE beside)."""
