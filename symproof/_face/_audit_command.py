"""``symproof audit FILE.py:NAME --like VARIANT.toml|CONFIG.json``.

Exit codes: 0 equivalent (either kind), 1 differs, 2 invalid input (the
code raised, hung, or no calling convention fits).  The user's code runs in
a child process (:mod:`._child`): the verdict, the exit code, the ``--json``
document and the report paths are this process's alone, and the report
folder is resolved before the code runs (the code may ``chdir``).
"""

from __future__ import annotations

import os
import sys

from .._ground._examples import resolve_example
from .._ground._io import output_folder
from .._ground._text import printable
from .._audit._audit import audit, audit_positions, rotary_regimes
from .._audit._load import load_like
from .._audit._runner import RunnerError, split_target
from ._answer import print_answer

__all__ = ["main_audit"]


def main_audit(args) -> int:
    from .._ground._errors import InvalidInputError

    try:
        split_target(args.target)
    except RunnerError as err:
        raise InvalidInputError(str(err)) from None
    force = bool(getattr(args, "force", False))
    report = None
    if args.report is not None:  # resolved and refused before the user's code runs, not after
        from .._ground._io import check_owned_files
        from ..report._audit import FILES, PDF_NAME

        report = os.path.abspath(output_folder(args.report, "--report"))
        check_owned_files(report, FILES + (PDF_NAME,), option="--report", unlisted=True, force=force)
    args.like = resolve_example(args.like, "--like")  # an existing path, or a shipped example named by its stem
    regime = getattr(args, "regime", None)
    # a bad --like or --seq-len is reported before the user's code runs (for each regime a plain command audits;
    # a multi-axis model is probed per axis, its --seq-len refusal is the audit's)
    for name in (regime,) if regime is not None else rotary_regimes(args.like):
        variant = load_like(args.like, args.head_dim, name, axes=True)
        if len(variant.axes) == 1:
            audit_positions(variant, args.seq_len)
    like = args.like  # read here, in this process, whose folder the user's code cannot change
    seconds = getattr(args, "timeout", None)
    result = audit(args.target, like, head_dim=args.head_dim, seq_len=args.seq_len, name=args.target,
                   apply=getattr(args, "apply", None), table=getattr(args, "table", None),
                   call=getattr(args, "call", None), layout=getattr(args, "layout", None),
                   dtype=getattr(args, "dtype", None), cast_module=bool(getattr(args, "cast_module", False)), regime=regime,
                   **({"probe_seconds": seconds} if seconds else {}))
    print_answer(args, result.as_dict, result.summary)
    sys.stdout.flush()
    if report is not None and result.axes:
        raise InvalidInputError("--report: the report pages do not show a per-axis audit yet; the verdict and its "
                                "differences are the output above (--json for a file)")
    if report is not None:
        from ..report import pdf_note
        from ..report._audit import write_pdf, write_report

        paths = write_report(result, report, force=force)
        print(f"report written to {printable(paths[0])}", file=sys.stderr)
        note = pdf_note(write_pdf(result, report, force=force))
        if note:
            print(note, file=sys.stderr)
    return result.exit_code
