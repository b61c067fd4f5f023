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

import os
import time

from .._ground._budget import BudgetExhausted, TimeLimitExceeded, cpu_budget
from .._ground._errors import InvalidInputError, VariantFileError
from .._ground._examples import resolve_example
from .._ground._io import check_owned_files, output_folder
from .._ground._text import one_line
from ..models._json import is_model_config
from ..variants._spec import Variant
from ..variants._steps import DEFAULT_STEPS, removed_budget
from ._answer import print_answer

# the checker, the prover and the family table are imported where they are used: a file refused while it
# is read (most refusals) pays for reading it only

__all__ = ["main_check"]

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
    plot = getattr(args, "plot", None)
    if len(files) > 1 or any(os.path.isdir(f) for f in files):
        if plot is not None:
            raise InvalidInputError("--plot: expected one variant file, got a scan of several", option="--plot")
        return _main_scan(args, files, budget)
    # an existing path, or a shipped example named by its stem
    args.file = path = resolve_example(files[0])
    if is_model_config(path):
        if plot is not None:
            raise InvalidInputError(f"--plot: expected a variant file (.toml), got the model config {path}",
                                    option="--plot")
        return _main_model(args, start, budget)
    from ..variants._layers import LayerPattern, load_description

    # a variant, or a layer pattern (a top-level [layers] table): the file is read and parsed once
    variant = _loaded(load_description, path, LOAD_BUDGET, "the description",
                      ": its formulas are too costly to evaluate for every pair")
    if isinstance(variant, LayerPattern):
        return _main_layers(args, start, budget, variant)
    export_dir = getattr(args, "export", None)
    report_dir = getattr(args, "report", None)
    # refuse an unusable target or output folder before the work, not after it
    if export_dir is not None:
        from ..variants._export import check_target

        check_target(variant, getattr(args, "target", "numpy"))
        export_dir = output_folder(export_dir, "--export")
        check_owned_files(export_dir, (), option="--export")
    if plot is not None:
        _check_plot_path(plot, variant)
    if report_dir is not None:
        from ..report._report import check_report_folder

        report_dir = output_folder(report_dir, "--report")
        check_report_folder(report_dir, "variant", "--report")
    # the kernel property runs the numpy and C files (cheap), and the torch file when it is the one
    # --export writes: importing torch costs a check about 1.7 s and 200 MB
    from ..variants._check import check_variant
    from ..variants._results import exit_code, format_results, results_as_dict

    targets = {"numpy", "c"} | ({getattr(args, "target", "numpy")} if export_dir is not None else set())
    results = check_variant(variant, kernel_targets=targets, **budget)
    seconds = time.perf_counter() - start
    print_answer(args, lambda: results_as_dict(variant, results, seconds),
                 lambda: format_results(variant, results, seconds))
    if export_dir is not None:
        from ..variants._export import variant_kernel

        target = getattr(args, "target", "numpy")
        _export_checked(lambda: variant_kernel(variant, target), target, export_dir, results, args)
    if report_dir is not None:
        _write_report(variant, results, report_dir, force=bool(getattr(args, "force", False)))
    if plot is not None:
        from ..variants._plot import write_decay_plot  # only here: a check without --plot draws nothing

        write_decay_plot(variant, plot, option="--plot")
    return exit_code(results)


def _main_layers(args, start, budget, layers) -> int:
    """``symproof check LAYERS.toml``: every layer type of a layer-pattern file, each decided on its own."""
    from ..variants._layers import check_layers, format_layers, layers_as_dict, layers_exit_code

    for option in ("plot", "report"):
        if getattr(args, option, None) is not None:
            raise InvalidInputError(f"--{option}: expected a variant file, got the layer-pattern file {args.file} "
                                    "(its layer types are checked together; --export writes one kernel per type)",
                                    option=f"--{option}")
    export_dir = getattr(args, "export", None)
    target = getattr(args, "target", "numpy")
    if export_dir is not None:
        from ..variants._export import check_target

        for variant in layers.types.values():
            check_target(variant, target)
        export_dir = output_folder(export_dir, "--export")
        check_owned_files(export_dir, (), option="--export")
    targets = {"numpy", "c"} | ({target} if export_dir is not None else set())
    checked = check_layers(layers, kernel_targets=targets, **budget)
    seconds = time.perf_counter() - start
    print_answer(args, lambda: layers_as_dict(layers, checked, seconds), lambda: format_layers(layers, checked, seconds))
    if export_dir is not None:
        from ..variants._export import variant_kernel

        for kind, results in checked:
            variant = layers.types[kind]
            _export_checked(lambda v=variant: variant_kernel(v, target), target, export_dir, results, args)
    return layers_exit_code(checked)


def _check_plot_path(plot: str, variant: Variant) -> None:
    """Refuse an unusable ``--plot`` before the check's work, not after it."""
    if not str(plot).strip():
        raise InvalidInputError("--plot: expected a file name (OUT.svg), got an empty string", option="--plot")
    if not str(plot).lower().endswith(".svg"):
        raise InvalidInputError(f"--plot: expected a file name ending in .svg, got {plot}", option="--plot")
    if os.path.isdir(plot) and not os.path.islink(plot):
        raise InvalidInputError(f"--plot {plot}: is a folder, expected a file name", option="--plot")
    if variant.kind not in ("rotary", "bias"):
        raise InvalidInputError(f"--plot: {variant.name} is a {variant.kind} file; the decay curve is drawn for "
                                "rotary and bias files", option="--plot")
    if variant.kind == "bias" and len(variant.axes) > 1:
        raise InvalidInputError(f"--plot: {variant.name} is a bias over the axes {list(variant.axes)}; the decay "
                                "curve is drawn along one axis (bias files without bias.axes)", option="--plot")


def _main_scan(args, files, budget) -> int:
    """Several configs or a folder: the zoo scan (:mod:`._scan`)."""
    from ..models._scan import scan

    for option in ("export", "report"):
        if getattr(args, option, None) is not None:
            raise InvalidInputError(f"--{option} takes one file; a scan of several configs writes nothing",
                                    option=f"--{option}")
    jobs = getattr(args, "jobs", None)
    return scan(files, jobs=1 if jobs is None else jobs, limits=budget, as_json=getattr(args, "json", False))


def _main_model(args, start, budget) -> int:
    """``symproof check CONFIG.json``: every rotary regime of the model, each proved and reported."""
    from ..models._check import check_model, check_model_target, format_model, model_as_dict, model_exit_code, \
        model_kernel

    from ..models._config import load_model, reads_through_transformers

    load_budget = IDENTIFY_BUDGET if reads_through_transformers(args.file) else LOAD_BUDGET
    model = _loaded(load_model, args.file, load_budget, "the config")
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
    print_answer(args, lambda: model_as_dict(model, checked, seconds), lambda: format_model(model, checked, seconds))
    if export_dir is not None:
        every = [r for _, results in checked for r in results]  # the kernel of every regime
        _export_checked(lambda: model_kernel(model, target), target, export_dir, every, args)
    if report_dir is not None:
        _write_report(model.regimes[0].checked, checked[0][1], report_dir, force=bool(getattr(args, "force", False)))
    return model_exit_code(checked)


def _export_checked(kernel, target: str, export_dir, results, args) -> None:
    """``--export``: the kernel (``kernel()`` builds it) written through the owned-files writer, unless a
    property it rests on is not proved.  That property was decided on the very files --export would write:
    a file that does not import, run or agree is not written, in one line, and the check itself answered
    (its exit 1: the kernel disagrees).  ``--allow-unproved`` writes it anyway, its header saying so."""
    from .._export import write_kernel
    from ..prover import PROVED
    from ..variants._results import _property_key

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
    from ..variants._export import variant_source

    listings = [(f"Generated kernel: {name}", "python", text)
                for name, text in variant_source(variant, "numpy").items()]
    paths = render_report(results, folder, title=f"Variant check: {variant.title}",
                          sections={"variant": f"{variant.title} ({variant.source})"},
                          extra_listings=listings, tex_name="variant", option="--report", force=force)
    print(one_line(f"report written to {paths['html']}"), file=_stderr())
    note = pdf_note(paths)
    if note:
        print(one_line(note), file=_stderr())


def _loaded(load, path, budget: float, what: str, why: str = ""):
    """``load(path)`` within ``budget`` seconds of CPU, or one line naming the file and the budget."""
    try:
        with cpu_budget(budget, "loading"):
            return load(path)
    except BudgetExhausted:
        raise VariantFileError(f"{path}: loading {what} takes more than {budget:g} s of CPU time (the load "
                               f"budget){why}") from None
