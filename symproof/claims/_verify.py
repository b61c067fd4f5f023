"""Run a selection of the chapter's claims and show the verdicts as a table.

Shared by ``symproof verify`` and ``symproof report``, so both print the same table.
"""

from __future__ import annotations

import os
import time

from ._runner import MEASURED, load_claims, run_claims, select_claims

__all__ = ["verify_claims", "format_table"]


def _escapes_understood() -> bool:
    """Does the terminal take escape sequences? Not a ``dumb`` one (Emacs shells, some CI logs)."""
    return os.environ.get("TERM", "") not in ("", "dumb")


def _progress_printer(stream):
    if stream is None or not stream.isatty():
        return None
    shown = [0]

    def show(k, total, claim):
        text = f"[{k + 1}/{total}] {claim.id} ..."
        if _escapes_understood():
            stream.write(f"\r\033[K{text}")
        else:  # a carriage return and spaces: what every terminal understands
            stream.write(f"\r{' ' * shown[0]}\r{text}")
        shown[0] = len(text)
        stream.flush()

    show.clear = lambda: stream.write("\r\033[K" if _escapes_understood() else f"\r{' ' * shown[0]}\r")
    return show


def verify_claims(patterns=None, *, progress_stream=None):
    """Load, select and run claims; returns ``(results, seconds)``.

    Progress is written to ``progress_stream`` when it is a terminal.
    """
    start = time.perf_counter()
    chosen = select_claims(load_claims(), patterns)
    progress = _progress_printer(progress_stream)
    results = run_claims(chosen, progress)
    if progress:
        progress.clear()
    return results, time.perf_counter() - start


def format_table(results, total_seconds: float) -> str:
    """The verdict table: one line per claim, the reason under a claim that is not proved."""
    width = max([len(r.id) for r in results] + [5])
    lines = [f"{'claim':<{width}}  {'verdict':<8}  {'seconds':>7}  method"]
    for r in results:
        lines.append(f"{r.id:<{width}}  {r.verdict:<8}  {r.seconds:7.3f}  {r.method}")
        if r.status != "proved" and r.reason:
            lines.append(f"{'':<{width}}    -> {r.reason}")
    counts = {s: sum(r.verdict == s for r in results) for s in ("proved", MEASURED, "refuted", "unknown")}
    # a measured claim passed its measurements: it counts apart from the proofs, said only when there is one
    measured = f", {counts[MEASURED]} measured" if counts[MEASURED] else ""
    checked = sum(r.certificates + r.rejected for r in results)
    rejected = sum(r.rejected for r in results)
    verdict = "all accepted" if not rejected else f"{rejected} REJECTED"
    lines.append(
        f"{len(results)} claim{'' if len(results) == 1 else 's'}: {counts['proved']} proved{measured}, {counts['refuted']} refuted, "
        f"{counts['unknown']} unknown in {total_seconds:.2f} s; "
        f"{checked} proof certificates re-checked by the independent checker: {verdict}"
    )
    return "\n".join(lines)
