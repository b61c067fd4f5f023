"""``symproof audit FILE.py:FUNCTION --like VARIANT.toml|CONFIG.json``.

Exit codes: 0 equivalent (either kind), 1 differs, 2 invalid input.
"""

from __future__ import annotations

import contextlib
import json
import sys

from .._examples import resolve_example
from ._audit import audit, audit_positions
from ._load import load_function, load_like

__all__ = ["main_audit"]


def main_audit(args) -> int:
    if args.report is not None:  # refused before the user's code runs, not after
        from .._io import check_owned_files, output_folder
        from ._report import FILES, PDF_NAME

        check_owned_files(output_folder(args.report, "--report"), FILES + (PDF_NAME,), option="--report",
                          unlisted=True, force=bool(getattr(args, "force", False)))
    like = resolve_example(args.like, "--like")  # an existing path, or a shipped example named by its stem
    variant = load_like(like, args.head_dim)  # a bad --like or --seq-len is reported before the user's code runs
    audit_positions(variant, args.seq_len)
    # whatever the user's code prints goes to stderr: stdout carries the verdict (and stays valid JSON)
    with contextlib.redirect_stdout(sys.stderr):
        function = load_function(args.target)
        result = audit(function, variant, seq_len=args.seq_len, name=args.target)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(result.summary())
    if args.report:
        from ..report import pdf_note
        from ._report import write_pdf, write_report

        paths = write_report(result, args.report, force=bool(getattr(args, "force", False)))
        print(f"report written to {paths[0]}", file=sys.stderr)
        note = pdf_note(write_pdf(result, args.report, force=bool(getattr(args, "force", False))))
        if note:
            print(note, file=sys.stderr)
    return result.exit_code
