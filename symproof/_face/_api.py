"""The command line's verbs as Python functions: :func:`verify`, :func:`check`, :func:`export`.

Each is a thin wrapper over what ``symproof verify`` / ``check`` / ``export`` call, and returns a
result object: a one-line ``repr``, the command's table as ``str()``, its JSON as ``as_dict()``,
a view in notebooks, and ``exit_code``, the code the command would exit with.  Invalid input
raises a :class:`~symproof.SymproofError` where the command exits 2 (it prints the same message);
a claim not proved is a result (``ok`` is false, ``exit_code`` 1), as it is for the command.
``symproof.audit`` (the fourth verb) returns its own :class:`~symproof.AuditResult`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence, Union

from .._ground._errors import InvalidInputError

if TYPE_CHECKING:
    from ..claims import ClaimResult

__all__ = ["verify", "VerifyResult", "check", "CheckResult", "export", "ExportResult"]

#: how many of a result's claims its ``repr`` names before "..."
_NAMED_IN_REPR = 3


def _counts(results: Sequence[ClaimResult]) -> str:
    from ..claims import MEASURED

    counts = {verdict: sum(r.verdict == verdict for r in results)
              for verdict in ("proved", MEASURED, "refuted", "unknown")}
    return ", ".join(f"{n} {verdict}" for verdict, n in counts.items() if n or verdict != MEASURED)


def _rows_html(title: str, results: Sequence[ClaimResult]) -> str:
    from ._notebook import to_html

    rows = [(r.id, f"{r.verdict} ({r.method})" + (f"; witness {r.witness_text}" if r.witness_text else "")
             + (f"; {r.reason}" if r.reason and r.status != "proved" else "")) for r in results]
    return to_html(title, rows)


@dataclass(frozen=True)
class VerifyResult:
    """What :func:`verify` found: one :class:`~symproof.ClaimResult` per selected claim, in order."""

    results: tuple
    seconds: float

    @property
    def ok(self) -> bool:
        """Every selected claim proved (``symproof verify`` exits 0)."""
        return bool(self.results) and all(r.status == "proved" for r in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[ClaimResult]:
        return iter(self.results)

    def __getitem__(self, key: int | str) -> ClaimResult:
        """A result by position, or by claim ID."""
        if isinstance(key, str):
            for result in self.results:
                if result.id == key:
                    return result
            raise KeyError(key)
        return self.results[key]

    def as_dict(self) -> list:
        """The JSON ``symproof verify --json`` prints."""
        return [r.as_dict() for r in self.results]

    def __str__(self) -> str:
        from ..claims import format_table

        return format_table(self.results, self.seconds)

    def __repr__(self) -> str:
        ids = [r.id for r in self.results[:_NAMED_IN_REPR]] + (["..."] if len(self) > _NAMED_IN_REPR else [])
        return (f"<VerifyResult {len(self)} claim{'' if len(self) == 1 else 's'} ({', '.join(ids)}): "
                f"{_counts(self.results)}>")

    def _repr_html_(self) -> str:
        return _rows_html(f"verify: {_counts(self.results)}", self.results)


def verify(patterns: str | Iterable[str] | None = None) -> VerifyResult:
    """Run the chapter's claims (all, or those matching ``patterns``: IDs or globs such as ``"rope.*"``).

    ``symproof verify PATTERN...`` in Python; a pattern matching no claim raises
    :class:`~symproof.InvalidInputError` naming the closest IDs."""
    from ..claims import verify_claims

    if isinstance(patterns, str):
        patterns = [patterns]
    elif patterns is not None:
        patterns = list(patterns)
        if not all(isinstance(p, str) for p in patterns):
            raise InvalidInputError(f"verify: expected claim IDs or globs as strings, got {patterns!r}"[:300])
    results, seconds = verify_claims(patterns)
    return VerifyResult(tuple(results), seconds)


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check` found: the variant (or model), each property's result, the command's exit code."""

    subject: Any            # the Variant, the LayerPattern of a layer-pattern file, or the ModelRope of a config
    results: tuple          # every property's ClaimResult (of every rotary regime, for a model)
    seconds: float
    exit_code: int
    _text: str = field(repr=False)
    _json: dict = field(repr=False)

    @property
    def title(self) -> str:
        title = getattr(self.subject, "title", None)  # a Variant's; a model config is named by its type
        return str(title) if title else f"{getattr(self.subject, 'model_type', 'model')} config"

    @property
    def ok(self) -> bool:
        """Every property decided (``symproof check`` exits 0); a property that does not hold is an answer."""
        return self.exit_code == 0

    @property
    def kept(self) -> list:
        """The properties proved; with several layer types or regimes, a property not proved in every
        one is named per part (``"global.decay"``)."""
        return _named_by_status(self.results, "proved")

    @property
    def lost(self) -> list:
        """The properties refuted, named as in :attr:`kept`."""
        return _named_by_status(self.results, "refuted")

    def as_dict(self) -> dict:
        """The JSON ``symproof check --json`` prints."""
        return self._json

    def records(self) -> list:
        """One flat dict per property, as the JSON gives it (a nested object's keys dotted, ``tested.targets``),
        with its ``layer_type`` (a layer-pattern file) or ``regime`` (a model config whose layers differ)
        first: ``pandas.DataFrame(result.records())`` is a table of the verdicts."""
        document = self._json
        if "layers" in document:
            return [{"layer_type": kind, **_flat(row)} for kind, part in document["layers"]["types"].items()
                    for row in part["properties"]]
        if "regimes" in document:
            return [{"regime": regime["regime"], **_flat(row)} for regime in document["regimes"]
                    for row in regime.get("properties", ())]
        return [_flat(row) for row in document["properties"]]

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        from .._ground._text import one_line

        unknown = _named_by_status(self.results, "unknown")
        summary = f"keeps {', '.join(self.kept) or '-'}; loses {', '.join(self.lost) or '-'}" + \
                  (f"; unknown {', '.join(unknown)}" if unknown else "")
        shown = one_line(f"<CheckResult {self.title}: {summary}; exit {self.exit_code}>")
        if len(shown) > _REPR_CHARS:  # several layer types: the names are in .kept and .lost
            unknown_count = f", {len(unknown)} unknown" if unknown else ""
            shown = one_line(f"<CheckResult {self.title}: keeps {len(self.kept)}, loses {len(self.lost)}{unknown_count} "
                             f"(.kept, .lost); exit {self.exit_code}>")
        return shown

    def _repr_html_(self) -> str:
        return _rows_html(f"check {self.title}: {_counts(self.results)}", self.results)


def _flat(row: dict, prefix: str = "") -> dict:
    """A JSON object with its nested objects spread out under dotted keys (``tested.targets``)."""
    flat: dict = {}
    for key, value in row.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


#: the longest repr that names every property; a longer one counts them
_REPR_CHARS = 300


def _property(result: ClaimResult) -> str:
    return result.claim.name or result.id.rsplit(".", 1)[-1]


def _named_by_status(results: tuple, status: str) -> list:
    """The properties with ``status``, in order: a property with that status in every part (layer type or
    regime: the results of one variant share the id before the property's name) by its name alone, one
    whose status differs between parts as ``part.name`` for each part where it has it."""
    parts = list(dict.fromkeys(r.id.rsplit(".", 1)[0] for r in results))
    if len(parts) < 2:
        return [_property(r) for r in results if r.status == status]
    common = os.path.commonprefix(parts)
    common = common[:common.rfind("-") + 1]  # a whole word: 'x-local' and 'x-long' share 'x-', not 'x-lo'
    statuses: dict = {}
    for r in results:
        statuses.setdefault(_property(r), []).append((r.id.rsplit(".", 1)[0][len(common):] or "-", r.status))
    named = []
    for name, seen in statuses.items():
        if len(seen) == len(parts) and all(s == status for _, s in seen):
            named.append(name)
        else:
            named += [f"{part}.{name}" for part, s in seen if s == status]
    return named


#: the largest text :func:`check` parses (the files the command reads have the same bound)
_MAX_TEXT = 1 << 20


_REMOVED = object()


def check(path_or_text: str | os.PathLike, *, steps: int | None = None, time_limit: float | None = None,
          plot: str | os.PathLike | None = None, budget: object = _REMOVED) -> CheckResult:
    """Check which of the chapter's properties a variant keeps: ``symproof check`` in Python.

    ``path_or_text``: a variant description or a layer-pattern file (.toml) or a model config
    (config.json) by path, the name of a shipped example (``symproof examples``), or the text
    itself (TOML, or JSON starting with ``{``; a text is told from a name by a line break or a
    leading ``{``).  A layer pattern's results are those of every layer type, in the file's order.
    ``steps``: the step budget of each property (the command's ``--steps``; default
    :data:`symproof.variants.DEFAULT_STEPS`): the verdicts depend on the file and it only.
    ``time_limit``: seconds of CPU time for each property, a safety stop (default: none); when
    one property passes it, :class:`~symproof.TimeLimitExceeded` is raised (no verdict).
    ``plot``: also draw the decay curve to this SVG file (the command's ``--plot``): certified enclosures of
    RoFormer's bound (rotary) or of each head's bias (bias) at ``D = 0..128``, written atomically.
    An invalid file raises :class:`~symproof.VariantFileError` naming the key and what was expected."""
    from .._ground._budget import BudgetExhausted, cpu_budget
    from .._ground._examples import resolve_example
    from ..prover._budget import validate_steps, validate_timeout
    from ..variants._check import DEFAULT_STEPS, removed_budget
    from ._check_command import LOAD_BUDGET
    from ..variants._results import exit_code, format_results, results_as_dict
    from ..models._check import check_model, format_model, model_as_dict, model_exit_code
    from ..models._config import load_model
    from ..models._json import is_model_config, loads_config
    from ..variants._layers import (LayerPattern, check_layers, format_layers, layers_as_dict, layers_exit_code,
                                    load_description, loads_description)
    from ..variants import check_variant

    if budget is not _REMOVED:
        raise InvalidInputError(removed_budget("check(budget=...)", "steps=N", "time_limit=SECONDS"))
    steps = DEFAULT_STEPS if steps is None else validate_steps(steps)
    time_limit = validate_timeout(time_limit, "time_limit")
    if not isinstance(path_or_text, (str, os.PathLike)):
        raise InvalidInputError(f"check: expected a path, an example name or the text of a variant or config, "
                                f"got {type(path_or_text).__name__}")
    text = path_or_text if isinstance(path_or_text, str) and ("\n" in path_or_text
                                                              or path_or_text.lstrip().startswith("{")) else None
    if text is not None and len(text) > _MAX_TEXT:
        raise InvalidInputError(f"check: the text is {len(text)} characters; at most {_MAX_TEXT} are read")
    start = time.perf_counter()
    source = "<text>" if text is not None else resolve_example(path_or_text)
    model_config = text.lstrip().startswith("{") if text is not None else is_model_config(source)
    try:
        with cpu_budget(LOAD_BUDGET, "loading"):
            if model_config:
                model = load_model(loads_config(text, source) if text is not None else source)
            else:  # a variant, or a layer pattern (a top-level [layers] table): the TOML is parsed once
                described = loads_description(text, source) if text is not None else load_description(source)
    except BudgetExhausted:
        from .._ground._errors import VariantFileError

        raise VariantFileError(f"{source}: loading takes more than {LOAD_BUDGET:g} s of CPU time (the load "
                               "budget)") from None
    if plot is not None:
        from ._check_command import _check_plot_path

        if model_config or isinstance(described, LayerPattern):
            what = "model config" if model_config else "layer-pattern file"
            raise InvalidInputError(f"check(plot=...): expected a variant file, got the {what} {source}")
        _check_plot_path(os.fspath(plot), described)
    if model_config:
        checked = check_model(model, steps=steps, time_limit=time_limit)
        seconds = time.perf_counter() - start
        results = tuple(r for _, regime_results in checked for r in regime_results)
        return CheckResult(model, results, seconds, model_exit_code(checked), format_model(model, checked, seconds),
                           model_as_dict(model, checked, seconds))
    if isinstance(described, LayerPattern):
        layers = described
        checked = check_layers(layers, steps=steps, time_limit=time_limit, kernel_targets={"numpy", "c"})
        seconds = time.perf_counter() - start
        results = tuple(r for _, type_results in checked for r in type_results)
        return CheckResult(layers, results, seconds, layers_exit_code(checked),
                           format_layers(layers, checked, seconds), layers_as_dict(layers, checked, seconds))
    variant = described
    results = tuple(check_variant(variant, steps=steps, time_limit=time_limit, kernel_targets={"numpy", "c"}))
    seconds = time.perf_counter() - start
    if plot is not None:
        from ..variants._plot import write_decay_plot

        write_decay_plot(variant, plot, option="check(plot=...)")
    return CheckResult(variant, results, seconds, exit_code(results), format_results(variant, results, seconds),
                       results_as_dict(variant, results, seconds))


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` generated: ``files`` (name -> source) and, when it wrote them, their ``paths``."""

    kernel: str
    target: str
    files: dict = field(repr=False)
    paths: tuple = ()

    def __repr__(self) -> str:
        where = f"written to {', '.join(self.paths)}" if self.paths else "not written"
        return f"<ExportResult {self.kernel} for {self.target}: {', '.join(self.files)} ({where})>"


def export(kernel: str = "rope", *, head_dim: int, target: str = "numpy", out: Union[str, os.PathLike, None] = None,
           pairing: str = "adjacent", rotary_dim: int | None = None, denominator: int | None = None,
           base: float = 10000.0, dtype: str | None = None, force: bool = False,
           allow_unproved: bool = False) -> ExportResult:
    """Generate a kernel as standalone source: ``symproof export`` in Python.

    The options are the command's (``head_dim`` is ``--head-dim``...).  Without ``out`` nothing is
    written: the sources are in ``files``.  With ``out`` the files are written there as the command
    writes them (same refusals: a file symproof did not write, unless ``force``; a kernel whose
    claims are not all proved, unless ``allow_unproved``)."""
    from .._export import file_name, kernel_files, with_unproved
    from .._ground._io import check_owned_files, output_folder
    from ..kernels._export import _kernel, check_export_options, write_kernel

    check_export_options(kernel, head_dim, rotary_dim, denominator, base)
    options = dict(head_dim=head_dim, rotary_dim=rotary_dim, base=base, denominator=denominator, pairing=pairing,
                   dtype=dtype)
    folder = None
    if out is not None:
        folder = output_folder(os.fspath(out), "out")
        check_owned_files(folder, [file_name(f"symproof_{kernel}", target)], option="out")
    unproved: list = []
    built = _kernel(kernel, target, None, True, None, None, options, unproved=unproved)
    if unproved and not allow_unproved:
        claim_id, status, reason = unproved[0]
        raise InvalidInputError(f"refusing to export {kernel!r}: claim {claim_id} is {status} ({reason}); "
                                "allow_unproved=True writes it, its header saying so")
    if unproved:  # allowed: the header names each claim not proved and why
        built = replace(built, provenance=tuple(with_unproved(built.provenance, unproved)))
    files = kernel_files(built, target)
    paths = () if folder is None else tuple(write_kernel(built, target, folder, option="out", force=force))
    return ExportResult(kernel, target, files, paths)
