"""The ground floor: what every other package may use and which uses none of them.

Errors (``_errors``), terminal-safe text (``_text``), files written whole and
owned (``_io``), CPU budgets (``_budget``), Ctrl-C (``_interrupt``), output
streams (``_streams``), the numerical-function printer's entry (``_lambdify``),
generated-file headers (``_provenance``), the shipped examples found by name
(``_examples``), the version (``_version``) and the notebook-display registry
(``_display``).  Nothing here imports from another symproof package.
"""
