"""``symproof export``: plain RoPE written as standalone source, through :mod:`symproof._export`.

Targets: a NumPy module (the very text ``rope_apply`` runs), a C99 ``.c``/``.h``
pair printed by SymPy's C printer, and a PyTorch module printed by SymPy's
PyTorch printer.  Every file opens with a header naming the definition and the
configuration it was generated from and the claims verified for it (re-run at
export time; a kernel whose claims do not all end *proved* is not written, unless
``--allow-unproved`` asks for it: its header then names each claim not proved and why).
This module resolves the configuration and the claims; the bodies, the header
and the writing are :mod:`symproof._export`'s, shared with ``symproof check
--export``.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from .._ground._errors import InvalidInputError, SymproofError
from .._export import TARGETS, Kernel, kernel_files, write_kernel
from .._ground._provenance import rope_provenance
from .._export._config import RopeConfig
from .._export._symbolic import rope_spec

__all__ = ["KERNELS", "TARGETS", "KERNEL_CLAIMS", "export_kernel", "kernel_sources", "kernel_listings",
           "check_export_options"]

#: the claims a kernel's correctness rests on; re-run and recorded in every exported file
KERNEL_CLAIMS = {
    "rope": ("rope.rotation", "rope.orthogonal", "rope.compose", "rope.relative", "rope.block_relative",
             "rope.frequency_denominator", "rope.partial", "rope.pairing_permutation", "rope.algorithm_7_1",
             "grad.rotation_backward"),
}
KERNELS = tuple(KERNEL_CLAIMS)
#: widest head ``symproof export`` writes a kernel for (the frequency table is baked into the source)
MAX_EXPORT_WIDTH = 16384


# --------------------------------------------------------------------------- claims

def verified_claims(kernel: str, results=None, *, unproved: list | None = None) -> list:
    """``[(id, verdict)]`` for the kernel's claims; raises if one is not proved, unless ``unproved``
    (a list) is given: each claim not proved is then appended to it as ``(id, verdict, reason)``.

    ``results`` (``ClaimResult``s of a run that just happened) are used as they
    are; without them the kernel's claims are run now.
    """
    if results is None:
        from ..claims import load_claims, run_claims

        registered = load_claims()
        results = run_claims([registered[cid] for cid in KERNEL_CLAIMS[kernel] if cid in registered])
    found = {r.id: r for r in results if r.id in KERNEL_CLAIMS[kernel]}
    failed = [r for r in found.values() if r.status != "proved"]
    if unproved is not None:
        unproved.extend((r.id, r.status, r.reason) for r in failed)
    elif failed:
        raise SymproofError(f"refusing to export {kernel!r}: claim {failed[0].id} is {failed[0].status} "
                            f"({failed[0].reason})", kernel=kernel)
    return [(cid, found[cid].status if cid in found else "not registered in this build")
            for cid in KERNEL_CLAIMS[kernel]]


def kernel_sources(kernel: str, target: str, *, config: RopeConfig | None = None, verify: bool = True,
                   claim_results=None, name: str | None = None, **options) -> dict:
    """``{file name: source}`` of ``kernel`` for ``target``, each file opening with its header.

    ``config`` (or the keyword options of :func:`rope_spec`) fixes the configuration;
    ``verify`` records the verdicts of the kernel's claims in the header (from
    ``claim_results`` when given, else by running the claims now)."""
    return kernel_files(_kernel(kernel, target, config, verify, claim_results, name, options), target)


def _kernel(kernel, target, config, verify, claim_results, name, options, unproved=None) -> Kernel:
    if kernel not in KERNELS:
        raise InvalidInputError(f"unknown kernel {kernel!r}; expected one of {KERNELS}", kernel=kernel)
    if target not in TARGETS:
        raise InvalidInputError(f"unknown target {target!r}; expected one of {TARGETS}", target=target)
    spec = rope_spec(config, **options)
    claims = verified_claims(kernel, claim_results, unproved=unproved) if verify else None
    return Kernel("rope", spec, name or f"symproof_{kernel}", tuple(rope_provenance(spec, target, claims)))


def export_kernel(kernel: str, target: str, out_dir: str | os.PathLike, *, config: RopeConfig | None = None,
                  verify: bool = True, name: str | None = None, option: str = "--out", force: bool = False,
                  allow_unproved: bool = False, claim_results: Iterable | None = None, **options: Any) -> list:
    """Write :func:`kernel_sources` into ``out_dir``; return the paths written.

    A kernel whose claims are not all proved is refused, unless ``allow_unproved``: then its header
    names each claim not proved and why.  ``force`` replaces same-name files symproof did not write."""
    unproved = []
    built = _kernel(kernel, target, config, verify, claim_results, name, options, unproved=unproved)
    return write_kernel(built, target, out_dir, option=option, force=force, unproved=unproved,
                        allow_unproved=allow_unproved)


def kernel_listings(claim_results) -> list:
    """``(title, language, source, file name, claims it rests on)`` of the exported RoPE kernels, for a
    report of ``claim_results``.

    Empty when the run did not prove every claim the kernels rest on (export would refuse)."""
    if not {cid for cid in KERNEL_CLAIMS["rope"]} <= {r.id for r in claim_results}:
        return []
    try:
        numpy_files = kernel_sources("rope", "numpy", head_dim=64, claim_results=claim_results)
        c_files = kernel_sources("rope", "c", head_dim=64, claim_results=claim_results)
    except SymproofError:
        return []
    rests_on = tuple(KERNEL_CLAIMS["rope"])
    listings = [(f"{filename} (symproof export rope --target numpy --head-dim 64)", "python", text, filename,
                 rests_on) for filename, text in numpy_files.items()]
    listings += [(f"{filename} (symproof export rope --target c --head-dim 64)", "c", text, filename, rests_on)
                 for filename, text in sorted(c_files.items(), key=lambda item: not item[0].endswith(".h"))]
    return listings


#: the largest frequency base accepted (exclusive): base^(-2r/D) and its powers stay far from overflow
MAX_BASE = 1e300


def check_export_options(kernel: str, head_dim, rotary_dim=None, denominator=None, base: float = 10000.0) -> None:
    """Refuse what ``symproof export`` refuses (``symproof.export`` too), in the command line's words."""
    if kernel not in KERNELS:
        raise InvalidInputError(f"unknown kernel {kernel!r}; expected one of {KERNELS}")
    if head_dim is None:
        raise InvalidInputError(f"export {kernel} needs --head-dim (the per-head width d_k)")
    for option, value in (("--head-dim", head_dim), ("--rotary-dim", rotary_dim), ("--denominator", denominator)):
        if value is not None and not 2 <= value <= MAX_EXPORT_WIDTH:
            raise InvalidInputError(f"{option}: expected an even width between 2 and {MAX_EXPORT_WIDTH} "
                                    f"(the bound on exported kernels), got {value}")
    if not (base > 1 and base < MAX_BASE):  # nan fails both
        raise InvalidInputError(f"--base: expected a number greater than 1 and less than {MAX_BASE:g}, "
                                f"got {base:g}")


