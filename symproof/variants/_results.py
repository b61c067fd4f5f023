"""A variant's verdicts as ``symproof check`` prints them: the table, the JSON document, the exit code.

Shared by the command (:mod:`symproof._face._check_command`) and the model
checks (:mod:`symproof.models`), which print each regime the same way.
"""

from __future__ import annotations

from .._ground._examples import shipped_examples
from .._ground._text import one_line
from ..claims import TESTED
from ..prover import PROVED, REFUTED, UNKNOWN
from ._check import PROPERTY_TITLES
from ._kernel_file import TOLERANCE
from ._offset import not_applicable
from ._spec import Variant

__all__ = ["results_as_dict", "format_results", "shipped_variants", "exit_code"]

_HOLDS = {PROVED: "yes", REFUTED: "no", UNKNOWN: "?"}
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
    if variant.last_position is not None:
        lines.append(f"  positions 0..{variant.last_position} (positions = \"{variant.positions}\"): every property is "
                     "decided over these positions only, and the kernels refuse the others")
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


# -- what a *tested* verdict says it tested -----------------------------------------------------------


def tested_evidence(result) -> dict | None:
    """What the ``kernel`` property of ``result`` tested: the targets, the positions, the values compared,
    the largest difference (as a fraction of the allowance) and the tolerance; ``None`` when no file was
    compared."""
    checks = [p.data for p in result.proof.parts if isinstance(p.data, dict) and "positions" in p.data]
    if not checks:
        return None
    return {"targets": [c["target"] for c in checks], "positions": sorted({p for c in checks for p in c["positions"]}),
            "values_compared": sum(c["compared"] for c in checks),
            "largest_difference": max(c["max_ratio"] for c in checks),
            "tolerance": f"{TOLERANCE:g} x (1 + |position|)"}


def tested_summary(result) -> str:
    """One line: what a *tested* kernel property tested (never a proof: finitely many positions)."""
    evidence = tested_evidence(result)
    if evidence is None:
        return ""
    positions = evidence["positions"]
    span = f" ({min(positions)}..{max(positions)})" if positions else ""
    return (f"{', '.join(evidence['targets'])} files at {len(positions)} positions{span}, "
            f"{evidence['values_compared']} values: largest difference {evidence['largest_difference']:.2g} of the "
            f"tolerance {evidence['tolerance']}")
