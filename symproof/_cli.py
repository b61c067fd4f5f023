"""The ``symproof`` command: verify, report, export, check, audit."""

from __future__ import annotations

import argparse
import json
import sys

from ._errors import SymproofError
from ._interrupt import INTERRUPTED, restore_interrupt
from ._text import one_line
from .claims import format_table, verify_claims

__all__ = ["main"]


def _cmd_verify(args) -> int:
    results, seconds = verify_claims(args.ids, progress_stream=sys.stderr)
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        print(format_table(results, seconds))
    return 0 if results and all(r.status == "proved" for r in results) else 1


def _cmd_report(args) -> int:
    from .report import main_report

    return main_report(args)


def _cmd_export(args) -> int:
    from .kernels import main_export

    return main_export(args)


def _cmd_check(args) -> int:
    from .variants import main_check

    return main_check(args)


def _cmd_audit(args) -> int:
    from ._audit import main_audit

    return main_audit(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="symproof",
        description="Machine-checked mathematics of position in transformers.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    verify = sub.add_parser("verify", help="run the chapter's claims and print their verdicts")
    verify.add_argument("ids", nargs="*", metavar="ID_OR_GLOB", help="claim IDs or globs (default: all)")
    verify.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    verify.set_defaults(func=_cmd_verify)

    report = sub.add_parser("report", help="write the HTML and LaTeX reports")
    report.add_argument("--out", default="reports", help="output folder (default: reports/)")
    report.add_argument("--only", nargs="*", default=None, metavar="ID_OR_GLOB", help="claims to include")
    report.add_argument("--times", action="store_true",
                        help="write wall times into the reports (they are then not reproducible byte for byte)")
    report.add_argument("--no-pdf", action="store_true",
                        help="write the HTML and the TeX only (no pdflatex run)")
    report.set_defaults(func=_cmd_report)

    export = sub.add_parser("export", help="write a generated kernel as standalone source")
    export.add_argument("kernel", help="kernel name (e.g. rope, sinusoidal)")
    export.add_argument("--target", choices=("numpy", "c", "torch"), default="numpy")
    export.add_argument("--out", required=True, help="output folder")
    export.add_argument("--pairing", choices=("adjacent", "half"), default="adjacent")
    export.add_argument("--rotary-dim", type=int, default=None)
    export.add_argument("--head-dim", type=int, default=None)
    export.add_argument("--base", type=float, default=10000.0)
    export.add_argument("--denominator", type=int, default=None,
                        help="width D in omega_r = base^(-2r/D); required when --rotary-dim < --head-dim")
    export.add_argument("--dtype", choices=("float64", "float32"), default=None, help="element type (default float64)")
    export.set_defaults(func=_cmd_export)

    check = sub.add_parser("check", help="check which of the chapter's properties a variant keeps")
    check.add_argument("file", help="a variant description (TOML) or a model config (config.json)")
    check.add_argument("--json", action="store_true")
    check.add_argument("--report", default=None, metavar="DIR")
    check.add_argument("--export", default=None, metavar="DIR")
    check.add_argument("--target", choices=("numpy", "c", "torch"), default="numpy")
    check.add_argument("--budget", type=float, default=5.0, metavar="SECONDS",
                       help="CPU seconds for deciding all the properties; past it they are unknown (default 5)")
    check.set_defaults(func=_cmd_check)

    audit = sub.add_parser(
        "audit", help="audit your own RoPE code against a model: equivalent, after re-laying weights, or what differs",
        description="Probe the rotary code NAME of FILE.py (or of an importable module) with basis vectors and "
                    "compare it with the declared model. How it is called is found from its signature: "
                    "fn(x, positions); fn(q, k, positions) -> (q, k); a rotary module making (cos, sin) with "
                    "its apply(q, k, cos, sin); a table builder with the function consuming it; nn.Module "
                    "classes taking input_pos / position_ids / offset; vLLM's forward_native(positions, query, "
                    "key). WARNING: FILE.py is imported, which runs the code in it (in a child process, with a "
                    "time limit). Exit 0: equivalent (or equivalent after re-laying Wq/Wk), 1: differs, "
                    "2: invalid input.")
    audit.add_argument("target", metavar="FILE.py:NAME",
                       help="your rotary code: a function, a class or Class.method in FILE.py, or "
                            "package.module:NAME (importing it runs its code)")
    audit.add_argument("--like", required=True, metavar="VARIANT.toml|CONFIG.json",
                       help="the model it should equal: a variant description or a model's config.json")
    audit.add_argument("--json", action="store_true", help="print the verdict and differences as JSON")
    audit.add_argument("--head-dim", type=int, default=None, metavar="N", help="head width d (overrides the file's)")
    audit.add_argument("--seq-len", type=int, default=None, metavar="N",
                       help="call length (max position id + 1) to audit at; for length-dependent models (dynamic "
                            "NTK, LongRoPE) the default is their threshold, the longest call before they change")
    audit.add_argument("--report", default=None, metavar="DIR", help="write an HTML/LaTeX section and a plot there")
    audit.add_argument("--apply", default=None, metavar="NAME",
                       help="the function applying cos/sin or a table to q and k (e.g. apply_rotary_pos_emb), "
                            "defined next to the target")
    audit.add_argument("--table", default=None, metavar="NAME",
                       help="the function building the table (freqs_cis or cos, sin) or the rotary module")
    audit.add_argument("--call", default=None, metavar="EXPR",
                       help="where no convention fits: a Python expression in x and positions (the target "
                            "module's names in scope) giving the rotated x")
    audit.add_argument("--layout", default=None, choices=("td", "bthd", "bhtd", "tbhd", "flat"),
                       help="how x is laid out: td (..., T, D) (default), bthd, bhtd, tbhd, flat (tokens, D)")
    audit.add_argument("--dtype", default=None, choices=("float32", "float16", "bfloat16"),
                       help="probe in the element type the model runs in (value rounding accepted)")
    audit.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help="most seconds one probe call may take (default 10; the first call has its own "
                            "warm-up limit)")
    audit.set_defaults(func=_cmd_audit)
    return parser


def main(argv=None) -> int:
    """Run one command; every failure is one line on stderr and an exit code (2, or 130 for Ctrl-C)."""
    command = "symproof"
    restore_interrupt()
    try:
        args = build_parser().parse_args(argv)
        command = f"symproof {args.command}"
        return args.func(args)
    except SymproofError as err:
        return _fail(command, str(err), 2)
    except KeyboardInterrupt:
        return _fail(command, "interrupted", INTERRUPTED, prefix="")
    except MemoryError:
        return _fail(command, "out of memory: the input needs more memory than is available", 2)
    except RecursionError:
        return _fail(command, "the input is nested too deeply to process", 2)
    except BrokenPipeError:  # e.g. `symproof verify | head`: the reader left, nothing more to say
        _silence_stdout()
        return 1


def _fail(command: str, message: str, code: int, prefix: str = "error: ") -> int:
    print(f"{command}: {prefix}{one_line(message)}", file=sys.stderr, flush=True)
    return code


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
