"""``symproof check FILE``: the verdict of every property a variant description keeps.

Exit codes:

- ``0`` — the check ran and decided every property; a property that does not
  hold is an answer (``refuted``, with its witness), not a failure; the
  ``kernel`` property passes as ``tested`` (the written files agree with the
  exact definition at the positions listed: evidence, not a proof);
- ``1`` — the check ran but some property stayed ``unknown``, or the kernel
  generated from the definition disagrees with it (a bug to report);
- ``2`` — the description (or an option) is invalid: the error names the
  file, the key and what was expected;
- ``3`` — stopped: a property ran past ``--time-limit`` (a safety stop, not a
  verdict); the line on stderr names it, and no verdict is printed for it.

The verdicts depend on the file and ``--steps`` only (prover steps, counted
the same way on every machine); ``--time-limit`` can stop a run, never change
one of its answers.
"""

from __future__ import annotations

import json
import os
import time

from .._budget import BudgetExhausted, TimeLimitExceeded, cpu_budget
from .._errors import InvalidInputError, VariantFileError
from .._examples import resolve_example, shipped_examples
from .._io import check_owned_files, output_folder
from .._text import one_line
from ..claims import TESTED
from ..prover import PROVED, REFUTED, UNKNOWN
from ._check import DEFAULT_STEPS, PROPERTY_TITLES, check_variant, removed_budget
from ._kernel_file import tested_evidence, tested_summary
from ._model_config import is_model_config, load_model
from ._offset import not_applicable
from ._spec import Variant, load_variant

__all__ = ["main_check", "results_as_dict", "format_results", "shipped_variants", "exit_code"]

_HOLDS = {PROVED: "yes", REFUTED: "no", UNKNOWN: "?"}
#: seconds of CPU time for loading a description (every bound the file format sets keeps a valid
#: description far below it; a load that needs more is refused)
LOAD_BUDGET = 3.0
#: a model type read through transformers: importing it, building and running the shrunk model
IDENTIFY_BUDGET = 300.0
#: the largest ``--time-limit`` accepted (a day)
MAX_TIME_LIMIT = 86400.0
#: the exit code of a run stopped by ``--time-limit`` (no verdict for the property it names)
STOPPED = 3
#: the properties an exported kernel rests on: unless all are proved, ``--export`` writes nothing
#: (``--allow-unproved``: it writes the kernel, its header naming them)
EXPORT_RESTS_ON = ("kernel",)


def shipped_variants() -> dict:
    """The example descriptions shipped with symproof (``derivations/variants``): name -> path."""
    return {name: example.path for name, example in shipped_examples().items() if example.kind == "variant"}


def _property_key(result) -> str:
    return result.claim.name or result.id.rsplit(".", 1)[-1]


def results_as_dict(variant: Variant, results, seconds: float | None = None) -> dict:
    """The JSON document ``symproof check --json`` prints."""
    props = []
    for r in results:
        entry = r.as_dict()
        key = _property_key(r)
        props.append({
            "property": key,
            "id": r.id,
            "title": PROPERTY_TITLES.get(key, key),
            "statement": r.claim.statement,
            "holds": {PROVED: True, REFUTED: False}.get(r.status),
            "verdict": r.verdict,
            "method": entry["method"],
            "witness": entry["witness"],
            "reason": entry["reason"],
            "seconds": entry["seconds"],
        })
        if r.verdict == TESTED:  # evidence, not a proof: what was tested goes with it
            props[-1]["tested"] = tested_evidence(r)
    out = {"variant": variant.describe(), "properties": props, "exit_code": exit_code(results)}
    skipped = not_applicable(variant)
    if skipped:  # stated by the chapter, meaningless for this file: said so, never silently proved
        out["not_applicable"] = [{"property": key, "reason": why} for key, why in skipped]
    if seconds is not None:
        out["seconds"] = round(seconds, 4)
    return out


def exit_code(results) -> int:
    undecided = any(r.status == UNKNOWN for r in results)
    kernel_wrong = any(_property_key(r) == "kernel" and r.status != PROVED for r in results)
    return 1 if undecided or kernel_wrong else 0


def format_results(variant: Variant, results, seconds: float) -> str:
    """The table printed by ``symproof check`` without ``--json``."""
    width = max([len(_property_key(r)) for r in results] + [8])
    lines = [f"{variant.title} ({variant.kind}; {variant.source})"]
    lines += [f"  {note}" for note in variant.notes]
    lines.append(f"{'property':<{width}}  holds  {'verdict':<8}  {'seconds':>7}  detail")
    for r in results:
        key = _property_key(r)
        detail = r.method
        if r.witness_text and r.status != PROVED or (r.status == PROVED and r.claim.kind == "not-in-general"):
            detail = f"witness {r.witness_text}" if r.witness_text else detail
        if r.verdict == TESTED:
            detail = tested_summary(r) or detail
        lines.append(f"{key:<{width}}  {_HOLDS[r.status]:<5}  {r.verdict:<8}  {r.seconds:7.3f}  {detail}")
        if r.status != PROVED and r.reason:
            lines.append(f"{'':<{width}}    -> {r.reason}")
    for key, why in not_applicable(variant):
        lines.append(f"{key:<{width}}  {'-':<5}  {'n/a':<8}  {'':>7}  {why}")
    kept = [_property_key(r) for r in results if r.status == PROVED]  # a tested kernel is kept, said so above
    lost = [_property_key(r) for r in results if r.status == REFUTED]
    lines.append(f"keeps: {', '.join(kept) or '-'}; loses: {', '.join(lost) or '-'} ({seconds:.2f} s)")
    # the title, the file name and reasons quoting formulas come from the file: no escape sequence
    # or line separator of theirs reaches the terminal
    return "\n".join(one_line(line) for line in lines)


def main_check(args) -> int:
    """Run ``symproof check`` for parsed arguments; returns the exit code (see the module docstring)."""
    start = time.perf_counter()
    if getattr(args, "budget", None) is not None:
        raise InvalidInputError(removed_budget("--budget SECONDS", "--steps N", "--time-limit SECONDS"),
                                option="--budget")
    budget = limits(args)
    try:
        return _main_check(args, start, budget)
    except TimeLimitExceeded as stop:
        print(one_line(stopped_line(stop)), file=_stderr())
        return STOPPED


def stopped_line(stop: TimeLimitExceeded) -> str:
    """The line a run stopped by ``--time-limit`` ends with."""
    return (f"symproof check: {stop} (--time-limit SECONDS allows more; a time limit only stops a run, "
            "the verdicts depend on the file and --steps only)")


def limits(args) -> dict:
    """``{"steps": ..., "time_limit": ...}`` from ``--steps`` and ``--time-limit``, checked."""
    given = getattr(args, "steps", None)
    steps = DEFAULT_STEPS if given is None else given
    if isinstance(steps, str):  # the command line's text: a whole number, written in digits
        text = steps.strip().replace("_", "")
        steps = int(text) if text.isdigit() and len(text) <= 13 else None
    if steps is None or isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 10**12:
        raise InvalidInputError(f"--steps: expected a whole number of prover steps in [1, 10**12], "
                                f"got {str(given)[:40]}", option="--steps")
    seconds = getattr(args, "time_limit", None)
    if seconds is not None and not 0 < seconds <= MAX_TIME_LIMIT:
        raise InvalidInputError(f"--time-limit: expected a number of seconds in (0, {MAX_TIME_LIMIT:g}], "
                                f"got {seconds}", option="--time-limit")
    return {"steps": steps, "time_limit": seconds}


def _main_check(args, start, budget) -> int:
    files = [args.file] if isinstance(args.file, str) else list(args.file)
    if len(files) > 1 or any(os.path.isdir(f) for f in files):
        return _main_scan(args, files, budget)
    # an existing path, or a shipped example named by its stem
    args.file = path = resolve_example(files[0])
    if is_model_config(path):
        return _main_model(args, start, budget)
    try:
        with cpu_budget(LOAD_BUDGET, "loading"):
            variant = load_variant(path)
    except BudgetExhausted:
        raise VariantFileError(f"{path}: loading the description takes more than {LOAD_BUDGET:g} s of CPU "
                               "time (the load budget): its formulas are too costly to evaluate "
                               "for every pair") from None
    export_dir = getattr(args, "export", None)
    report_dir = getattr(args, "report", None)
    # refuse an unusable target or output folder before the work, not after it
    if export_dir is not None:
        from ._export import check_target

        check_target(variant, getattr(args, "target", "numpy"))
        export_dir = output_folder(export_dir, "--export")
        check_owned_files(export_dir, (), option="--export")
    if report_dir is not None:
        from ..report._report import check_report_folder

        report_dir = output_folder(report_dir, "--report")
        check_report_folder(report_dir, "variant", "--report")
    # the kernel property runs the numpy and C files (cheap), and the torch file when it is the one
    # --export writes: importing torch costs a check about 1.7 s and 200 MB
    targets = {"numpy", "c"} | ({getattr(args, "target", "numpy")} if export_dir is not None else set())
    results = check_variant(variant, kernel_targets=targets, **budget)
    seconds = time.perf_counter() - start
    if getattr(args, "json", False):
        print(json.dumps(results_as_dict(variant, results, seconds), indent=2))
    else:
        print(format_results(variant, results, seconds))
    if export_dir is not None:
        from ._export import variant_kernel

        target = getattr(args, "target", "numpy")
        _export_checked(lambda: variant_kernel(variant, target), target, export_dir, results, args)
    if report_dir is not None:
        _write_report(variant, results, report_dir, force=bool(getattr(args, "force", False)))
    return exit_code(results)


def _main_scan(args, files, budget) -> int:
    """Several configs or a folder: the zoo scan (:mod:`._scan`)."""
    from ._scan import scan

    for option in ("export", "report"):
        if getattr(args, option, None) is not None:
            raise InvalidInputError(f"--{option} takes one file; a scan of several configs writes nothing",
                                    option=f"--{option}")
    jobs = getattr(args, "jobs", None)
    return scan(files, jobs=1 if jobs is None else jobs, limits=budget, as_json=getattr(args, "json", False))


def _main_model(args, start, budget) -> int:
    """``symproof check CONFIG.json``: every rotary regime of the model, each proved and reported."""
    from ._model_check import check_model, check_model_target, format_model, model_as_dict, model_exit_code, \
        model_kernel

    from ._model_config import reads_through_transformers

    load_budget = IDENTIFY_BUDGET if reads_through_transformers(args.file) else LOAD_BUDGET
    try:
        with cpu_budget(load_budget, "loading"):
            model = load_model(args.file)
    except BudgetExhausted:
        raise VariantFileError(f"{args.file}: loading the config takes more than {load_budget:g} s of CPU time "
                               "(the load budget)") from None
    export_dir = getattr(args, "export", None)
    target = getattr(args, "target", "numpy")
    if export_dir is not None:
        check_model_target(model, target)
        export_dir = output_folder(export_dir, "--export")
    report_dir = getattr(args, "report", None)
    if report_dir is not None:
        if not model.plain:
            raise InvalidInputError(f"--report: {args.file} has several rotary regimes or a head layout the "
                                    "report does not show; check it without --report", option="--report")
        report_dir = output_folder(report_dir, "--report")
    checked = check_model(model, **budget)
    seconds = time.perf_counter() - start
    if getattr(args, "json", False):
        print(json.dumps(model_as_dict(model, checked, seconds), indent=2))
    else:
        print(format_model(model, checked, seconds))
    if export_dir is not None:
        every = [r for _, results in checked for r in results]  # the kernel of every regime
        _export_checked(lambda: model_kernel(model, target), target, export_dir, every, args)
    if report_dir is not None:
        _write_report(model.regimes[0].variant, checked[0][1], report_dir, force=bool(getattr(args, "force", False)))
    return model_exit_code(checked)


def _export_checked(kernel, target: str, export_dir, results, args) -> None:
    """``--export``: the kernel (``kernel()`` builds it) written through the owned-files writer, unless a
    property it rests on is not proved.  That property was decided on the very files --export would write:
    a file that does not import, run or agree is not written, in one line, and the check itself answered
    (its exit 1: the kernel disagrees).  ``--allow-unproved`` writes it anyway, its header saying so."""
    from .._export import write_kernel

    unproved = [(_property_key(r), r.status, r.reason) for r in results
                if _property_key(r) in EXPORT_RESTS_ON and r.status != PROVED]
    allow = bool(getattr(args, "allow_unproved", False))
    if unproved and not allow:
        what = "; ".join(f"the {key} property is {status}" + (f" ({why})" if why else "")
                         for key, status, why in unproved)
        print(one_line(f"symproof check: --export: nothing written: {what}; --allow-unproved writes it "
                       "anyway, its header saying so"), file=_stderr())
        return
    path = write_kernel(kernel(), target, export_dir, option="--export", force=bool(getattr(args, "force", False)),
                        unproved=unproved, allow_unproved=allow)
    print(one_line(f"kernel written to {', '.join(path)}"), file=_stderr())


def _stderr():
    import sys

    return sys.stderr


def _write_report(variant: Variant, results, folder, *, force: bool = False) -> None:
    from ..report import pdf_note, render_report
    from ._export import variant_source

    listings = [(f"Generated kernel: {name}", "python", text)
                for name, text in variant_source(variant, "numpy").items()]
    paths = render_report(results, folder, title=f"Variant check: {variant.title}",
                          sections={"variant": f"{variant.title} ({variant.source})"},
                          extra_listings=listings, tex_name="variant", option="--report", force=force)
    print(one_line(f"report written to {paths['html']}"), file=_stderr())
    note = pdf_note(paths)
    if note:
        print(one_line(note), file=_stderr())
