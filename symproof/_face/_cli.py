"""The ``symproof`` command: verify, report, export, check, audit, examples.

The subcommands and their options are the table :data:`COMMANDS`; :func:`build_parser` turns it
into argparse parsers.  A mistyped subcommand or option is answered with the subcommand's usage
and the closest spelling ("did you mean"), and every failure is one line and an exit code.

This module imports only the standard library and symproof's ground modules at its top: what a
command needs is imported when it runs, so that ``symproof --version`` and ``--help`` answer
without loading SymPy.  :func:`main`, run as the program, owns Ctrl-C (see :mod:`._interrupt`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass

from .._ground._version import __version__
from .._ground._errors import SymproofError, VariantFileError
from .._ground._interrupt import interruption, quiet_interrupt_when_done, quiet_interrupt_while_starting, restore_interrupt
from .._ground._streams import output_failure, tolerant_output
from .._ground._text import did_you_mean, one_line

__all__ = ["main", "build_parser", "COMMANDS"]


def _cmd_verify(args) -> int:
    from ..claims import format_table, verify_claims
    from ._answer import print_answer

    results, seconds = verify_claims(args.ids, progress_stream=sys.stderr)
    print_answer(args, lambda: [r.as_dict() for r in results], lambda: format_table(results, seconds))
    return 0 if results and all(r.status == "proved" for r in results) else 1


def _cmd_report(args) -> int:
    from ..report import main_report

    return main_report(args)


def _cmd_export(args) -> int:
    from ._export_command import main_export

    return main_export(args)


def _cmd_check(args) -> int:
    from ._check_command import main_check

    return main_check(args)


def _cmd_audit(args) -> int:
    from ._audit_command import main_audit

    return main_audit(args)


def _cmd_compare(args) -> int:
    from ._compare_command import main_compare

    return main_compare(args)


def _cmd_checklist(args) -> int:
    try:
        from ._checklist_command import main_checklist
    except ImportError as err:  # torch and transformers are optional: say which is missing, in one line
        raise SymproofError(f"symproof checklist needs torch and transformers installed ({err})") from None

    return main_checklist(args)


_FORCE_HELP = ("replace a file with an output's name that symproof did not write (by default such a file "
               "is refused, exit 2; symlinks, folders and special files are refused even so)")
_UNPROVED_HELP = ("write the kernel even when a property it rests on is not proved (refuted or unknown); its "
                  "header then says which and why (by default such a kernel is not written, exit 2)")


def _cmd_examples(args) -> int:
    from .._ground._examples import shipped_examples

    examples = shipped_examples()
    width = max(len(name) for name in examples)
    kinds = max(len(example.kind) for example in examples.values())
    for name, example in examples.items():
        print(one_line(f"{name:<{width}}  {example.kind:<{kinds}}  {example_title(example)}"))
    return 0


@dataclass(frozen=True)
class Command:
    run: object           # args -> exit code
    help: str             # the line in ``symproof --help``
    options: tuple        # (flags, argparse keyword arguments), in the order --help lists them
    description: str = ""  # the paragraph under ``symproof COMMAND --help``'s usage
    #: modules imported before the command runs, while Ctrl-C is still the quick exit (nothing written
    #: yet): the prover every command but ``examples`` builds on
    loads: tuple = ("symproof.claims",)


def _targets():
    from .._export import TARGETS

    return TARGETS


def _variant_targets():
    from .._export import FAMILY_TARGETS

    return FAMILY_TARGETS["variant"]


def _kernels():
    from ..kernels import KERNELS

    return KERNELS


_EXAMPLE_FILE = "a variant description (.toml), a model config (config.json), or the name of a shipped example " \
                "(`symproof examples` lists them; an existing path always wins)"

#: every subcommand, its options and their help; a required option says so in its help
COMMANDS = {
    "verify": Command(_cmd_verify, "run the chapter's claims and print their verdicts", (
        (("ids",), dict(nargs="*", metavar="ID_OR_GLOB", help="claim IDs or globs, e.g. 'rope.*' (default: all)")),
        (("--json",), dict(action="store_true", help="print a JSON array, one object per claim, instead of a table")),
    ), "Exit 0 when every selected claim is proved, 1 when one is not, 2 for invalid input."),
    "report": Command(_cmd_report, "write the HTML and LaTeX reports (and the PDF where pdflatex exists)", (
        (("--out",), dict(default="reports", metavar="DIR", help="output folder (default: reports/)")),
        (("--only",), dict(nargs="*", default=None, metavar="ID_OR_GLOB",
                           help="claims to include, as IDs or globs (default: all)")),
        (("--times",), dict(action="store_true",
                            help="write wall times into the reports (they are then not reproducible byte for byte)")),
        (("--no-pdf",), dict(action="store_true", help="write the HTML and the TeX only (no pdflatex run)")),
        (("--force",), dict(action="store_true", help=_FORCE_HELP)),
    ), "Exit 0 when every claim is proved and every file was written, 1 when a claim is not proved, "
       "2 when the PDF could not be built (the HTML and TeX are written all the same)."),
    "export": Command(_cmd_export, "write a generated kernel as standalone source", (
        (("kernel",), dict(choices=_kernels, metavar="KERNEL", help="the kernel to write: {choices}")),
        (("--head-dim",), dict(type=int, required=True, metavar="N", help="per-head width d_k (even)")),
        (("--out",), dict(required=True, metavar="DIR", help="output folder")),
        (("--target",), dict(choices=_targets, default="numpy",
                             help="language of the source: {choices} (default: numpy)")),
        (("--pairing",), dict(choices=("adjacent", "half"), default="adjacent",
                              help="pairs (2r, 2r+1) or (r, r + D/2) (default: adjacent)")),
        (("--rotary-dim",), dict(type=int, default=None, metavar="N",
                                 help="rotate only the first N coordinates (default: all of --head-dim)")),
        (("--denominator",), dict(type=int, default=None, metavar="D",
                                  help="width D in omega_r = base^(-2r/D); required when --rotary-dim < --head-dim")),
        (("--base",), dict(type=float, default=10000.0, metavar="B",
                           help="frequency base in omega_r = base^(-2r/D) (default: 10000)")),
        (("--dtype",), dict(choices=("float64", "float32"), default=None,
                            help="element type of the kernel (default: float64)")),
        (("--force",), dict(action="store_true", help=_FORCE_HELP)),
        (("--allow-unproved",), dict(action="store_true", help=_UNPROVED_HELP)),
    ), "Every file starts with a header naming the definition, the configuration and the claims verified "
       "for it; the export refuses if one of those claims is not proved."),
    "check": Command(_cmd_check, "check which of the chapter's properties a variant keeps", (
        (("file",), dict(nargs="+", metavar="FILE_OR_EXAMPLE",
                         help=_EXAMPLE_FILE + "; several configs, or a folder (a checkpoint, or a cache of them), "
                              "scan every config.json, one line each")),
        (("--jobs",), dict(type=int, default=1, metavar="N",
                           help="worker processes of a scan of several configs (default: 1)")),
        (("--json",), dict(action="store_true", help="print the verdicts as one JSON object instead of a table")),
        (("--report",), dict(default=None, metavar="DIR",
                             help="also write an HTML and LaTeX report of the check to DIR (and its PDF where "
                                  "pdflatex exists)")),
        (("--export",), dict(default=None, metavar="DIR",
                             help="also write the kernel generated from the variant's definition to DIR")),
        (("--target",), dict(choices=_variant_targets, default="numpy",
                             help="language of the --export kernel: {choices} (default: numpy)")),
        (("--plot",), dict(default=None, metavar="OUT.svg",
                           help="also draw the decay curve to OUT.svg: certified enclosures of RoFormer's bound "
                                "B(D) (rotary) or of each head's bias b(D, 0) (bias) at D = 0..128")),
        (("--steps",), dict(default=2_000_000, metavar="N",
                            help="prover steps for each property (every property starts with the whole "
                                 "budget); one not decided within them is unknown. Steps are counted the "
                                 "same way on every machine: the verdicts depend on the file and N only "
                                 "(default: 2000000)")),
        (("--time-limit",), dict(type=float, default=None, metavar="SECONDS",
                                 help="a safety stop: CPU seconds for each property; a property that runs "
                                      "past it stops the check with exit 3 and no verdict for it (never an "
                                      "unknown) (default: none)")),
        (("--budget",), dict(default=None, metavar="SECONDS",
                             help="removed: CPU seconds could change a verdict from one machine to another; "
                                  "use --steps N for more prover steps, --time-limit SECONDS to stop a long run")),
        (("--force",), dict(action="store_true", help=_FORCE_HELP + " (--export and --report)")),
        (("--allow-unproved",), dict(action="store_true", help=_UNPROVED_HELP + " (--export)")),
    ), "Exit 0 when every property is decided (one that does not hold is an answer, with its witness), "
       "1 when one stays unknown or the generated kernel disagrees, 2 for an invalid file or option, 3 when "
       "--time-limit stopped the check, 4 when a scan met an internal error on a config (a symproof bug; the "
       "other configs are checked all the same).", loads=("symproof.variants._spec",)),
    "audit": Command(_cmd_audit, "audit your own RoPE code against a model: equivalent, after re-laying "
                                 "weights, or what differs", (
        (("target",), dict(metavar="FILE.py:NAME",
                           help="your rotary code: a function, a class or Class.method in FILE.py, or "
                                "package.module:NAME (importing it runs its code)")),
        (("--like",), dict(required=True, metavar="FILE_OR_EXAMPLE",
                           help="the model it should equal: " + _EXAMPLE_FILE)),
        (("--json",), dict(action="store_true", help="print the verdict and differences as JSON")),
        (("--head-dim",), dict(type=int, default=None, metavar="N", help="head width d (overrides the file's)")),
        (("--regime",), dict(default=None, metavar="NAME",
                             help="with a config whose layers use several rotary maps (Gemma 3's "
                                  "sliding_attention and full_attention): the one this code implements; a rotary "
                                  "module taking layer_type is called with it")),
        (("--seq-len",), dict(type=int, default=None, metavar="N",
                              help="call length (max position id + 1) to audit at; for length-dependent models "
                                   "(dynamic NTK, LongRoPE) the default is their threshold, the longest call "
                                   "before they change")),
        (("--report",), dict(default=None, metavar="DIR",
                             help="also write an HTML page, a LaTeX section and a plot of the comparison to DIR")),
        (("--force",), dict(action="store_true", help=_FORCE_HELP + " (--report)")),
        (("--apply",), dict(default=None, metavar="NAME",
                            help="the function applying cos/sin or a table to q and k (e.g. apply_rotary_pos_emb), "
                                 "defined next to the target")),
        (("--table",), dict(default=None, metavar="NAME",
                            help="the function building the table (freqs_cis or cos, sin) or the rotary module")),
        (("--call",), dict(default=None, metavar="EXPR",
                           help="where no convention fits: a Python expression in x, shape (N, T, D), and "
                                "positions, shape (T,) (torch tensors or numpy arrays; the target module's names "
                                "in scope, lambdas included) giving the rotated x")),
        (("--layout",), dict(default=None, choices=("td", "bthd", "bhtd", "tbhd", "flat"),
                             help="how x is laid out: td (..., T, D) (default), bthd, bhtd, tbhd, flat (tokens, D)")),
        (("--dtype",), dict(default=None, choices=("float32", "float16", "bfloat16"),
                            help="the activations' element type (value rounding accepted); modules are built as "
                                 "from_pretrained(dtype=...) builds them (HF keeps inv_freq in float32)")),
        (("--cast-module",), dict(action="store_true",
                                  help="with --dtype: cast the whole module, buffers included (module.to(dtype))")),
        (("--timeout",), dict(type=float, default=None, metavar="SECONDS",
                              help="most seconds one call of the code may take (default 10; the first call has its own "
                                   "warm-up limit)")),
    ), "Probe the rotary code NAME of FILE.py (or of an importable module) with basis vectors and compare it with "
       "the declared model. How it is called is found from its signature: fn(x, positions); fn(q, k, positions) "
       "-> (q, k); a rotary module making (cos, sin) with its apply(q, k, cos, sin); a table builder with the "
       "function consuming it; nn.Module classes taking input_pos / position_ids / offset; vLLM's "
       "forward_native(positions, query, key). WARNING: FILE.py is imported, which runs the code in it (in a "
       "child process, with a time limit). Exit 0: equivalent (or equivalent after re-laying Wq/Wk), 1: differs, "
       "2: invalid input."),
    "checklist": Command(_cmd_checklist, "run the chapter's checklist (left padding, packing, KV cache, shift, "
                                         "reload) on a transformers model built from its config", (
        (("path",), dict(metavar="PATH", help="a config.json, a local checkpoint folder holding one, or the name of a "
                                              "shipped model config (`symproof examples` lists them)")),
        (("--only",), dict(nargs="*", default=None, metavar="ITEM",
                           help="items to run: left_padding, packing, kv_cache, shift, reload, configured_map "
                                "(default: all)")),
        (("--attn",), dict(choices=("eager", "sdpa"), default=None,
                           help="attention implementation of the model: {choices} (default: sdpa in float64, "
                                "else eager in float32: eager in float64 turns fully masked pad rows into NaN)")),
        (("--json",), dict(action="store_true", help="print one JSON object instead of a table")),
    ), "The model is built with seeded small random weights (sizes that do not enter positions shrunk; layers, "
       "head width, rope parameters and layer pattern kept), float64 where it builds; no network. Exit 0 when "
       "every item holds or does not apply, 1 when one fails (with its witness), 2 for invalid input."),
    "compare": Command(_cmd_compare, "whether two rotary maps are the same function, pair by pair: equal, or "
                                     "where they differ with a witness", (
        (("left",), dict(metavar="A", help=_EXAMPLE_FILE)),
        (("right",), dict(metavar="B", help="the second map, as A")),
        (("--json",), dict(action="store_true", help="print one JSON object instead of the summary")),
    ), "Each pair's 2x2 map (scale times block at the pair's angle) is compared at a symbolic position, query "
       "and key side, and proved equal or refuted with a basis vector and a position whose images differ. "
       "Exit 0 when decided (equal, or differ with its witness), 1 when unknown, 2 for an input that cannot be "
       "read."),
    "examples": Command(_cmd_examples, "list the shipped variant descriptions and model configs, by name", (),
                        "Each name can stand for its file in `symproof check NAME` and `symproof audit ... "
                        "--like NAME`.", loads=()),
}


def _add_option(parser, flags, options) -> None:
    options = dict(options)
    if callable(options.get("choices")):  # resolved here: the lists live with the code that uses them
        options["choices"] = tuple(options["choices"]())
    text = options.get("help", "")
    if "choices" in options:
        text = text.replace("{choices}", ", ".join(options["choices"]))
    if options.get("required") and flags[0].startswith("-"):
        text += " (required)"
    options["help"] = text
    parser.add_argument(*flags, **options)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but help or usage that cannot be written raises (argparse drops it silently)."""

    def _print_message(self, message, file=None):
        if message:
            (file or sys.stderr).write(message)


def build_parser(options_of=None) -> argparse.ArgumentParser:
    """The parser of ``symproof``; ``options_of``: the subcommands whose options are added (default:
    all).  The top-level ``--help`` lists every subcommand all the same; an option's choices may need
    an import (the kernels, the targets), so a command line builds only the subcommand it names."""
    parser = _Parser(prog="symproof",
                                     description="Machine-checked mathematics of position in transformers.")
    parser.add_argument("--version", action="version", version=f"symproof {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        child = sub.add_parser(name, help=command.help, description=command.description or command.help)
        if options_of is None or name in options_of:
            for flags, options in command.options:
                _add_option(child, flags, options)
        child.set_defaults(func=command.run)
    parser.subcommands = sub.choices  # name -> its parser, for the errors parse() reports itself
    return parser


def parse(argv=None) -> argparse.Namespace:
    """Parsed arguments; a mistyped subcommand or option exits 2 with a "did you mean".

    No arguments at all prints the whole help, on stderr with exit 2: argparse's convention for a
    command line that does not say what to do (a required argument missing), not ``--help``'s 0."""
    argv = sys.argv[1:] if argv is None else list(argv)
    word = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(options_of=(word,))
    if not argv:
        parser.print_help(sys.stderr)
        parser.exit(2, f"{parser.prog}: error: the following arguments are required: COMMAND\n")
    if word is not None and word not in COMMANDS:
        parser.error(f"unknown command {word!r}{did_you_mean(word, COMMANDS)} (expected one of: "
                     f"{', '.join(COMMANDS)})")
    args, extra = parser.parse_known_args(argv)
    if extra:
        child = parser.subcommands[args.command]
        known = [flag for action in child._actions for flag in action.option_strings]
        flag = next((a.split("=", 1)[0] for a in extra if a.startswith("-")), None)
        hint = did_you_mean(flag, known) if flag else ""
        child.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    return args


def main(argv=None) -> int:
    """Run one command; every failure is one line on stderr and an exit code (2; 130 for Ctrl-C, 143 for SIGTERM).

    Without ``argv`` it is the program (the console script, ``python -m symproof``): it reads
    ``sys.argv`` and handles Ctrl-C itself (:mod:`._interrupt`).  With ``argv`` (a test, a script)
    it leaves the caller's signal handlers alone."""
    as_program = argv is None
    if as_program:
        quiet_interrupt_while_starting()  # before any heavy import
    command = "symproof"
    try:
        if as_program:
            tolerant_output()  # an ASCII or Latin-1 terminal gets '?' for what it cannot show, not a traceback
        args = parse(argv)
        command = f"symproof {args.command}"
        for module in COMMANDS[args.command].loads:
            importlib.import_module(module)
        if as_program:
            restore_interrupt()  # inside the try: a Ctrl-C from here on is the one line below
        code = args.func(args)
        sys.stdout.flush()  # a full disk is found here, where it can still be one line
        return code
    except SystemExit:  # argparse's --help, --version and usage errors: their output must reach its place too
        _flush_or_fail(command)
        raise
    except SymproofError as err:
        return _fail(command, str(err), 2)
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (see _interrupt)
        return _fail(command, *interruption(err), prefix="")
    except MemoryError:
        return _fail(command, "out of memory: the input needs more memory than is available", 2)
    except RecursionError:
        return _fail(command, "the input is nested too deeply to process", 2)
    except BrokenPipeError:  # e.g. `symproof verify | head`: the reader left, nothing more to say
        _silence_stdout()
        return 1
    except OSError as err:  # output that cannot be written: > /dev/full, a full disk
        _silence_stdout()
        return _fail(command, output_failure(err), 2)
    finally:
        if as_program:
            quiet_interrupt_when_done()


def _fail(command: str, message: str, code: int, prefix: str = "error: ") -> int:
    try:
        print(f"{command}: {prefix}{one_line(message)}", file=sys.stderr, flush=True)
    except OSError:  # stderr cannot be written either: the exit code is all that is left
        pass
    return code


def _flush_or_fail(command: str) -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except OSError as err:
        _silence_stdout()
        _fail(command, output_failure(err), 2)
        raise SystemExit(2) from None


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def example_title(example) -> str:
    """One line saying what the example is: a variant's ``title``; for a config, what ``check`` reads in it."""
    if example.kind == "model config":
        from ..models import load_model

        model = load_model(example.path)  # a config whose layers differ has several regimes
        titles = [model.regime(name).variant for name in model.names]
        return "; ".join(v.title if v is not None else f"{name}: no rotation"
                         for name, v in zip(model.names, titles))
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(example.path, "rb") as handle:
            return str(tomllib.load(handle).get("title", example.name))
    except (OSError, ValueError) as err:
        raise VariantFileError(f"shipped example {example.path}: cannot be read ({err})") from None
