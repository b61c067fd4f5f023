"""Every generated kernel file goes through here: one dispatcher, one header, one writer.

The three commands that write kernels are thin callers of this module:

- ``symproof export rope`` (:mod:`symproof.kernels._export`): plain RoPE from a
  :class:`~symproof._export._symbolic.RopeSpec`;
- ``symproof check FILE.toml --export`` and ``symproof check CONFIG.json
  --export`` (:mod:`symproof.variants._export`): a variant is plain RoPE
  (its position transform folded into explicit frequencies), a general
  variant printed from its exact definition, or a rotary rule that reads the
  call's length (model configs, dynamic NTK, LongRoPE).

Each caller reduces what it exports to a :class:`Kernel`: the family of the
body, the payload the body is printed from, the module name and the
provenance lines (assembled by :mod:`symproof._ground._provenance`, the only place a
header is built and escaped).  :func:`kernel_files` picks the body generator
by family and target, prints the header once with
:func:`symproof._ground._provenance.render_header` and puts it first in every file;
:func:`write_kernel` writes the files through the owned-files writer, once.

The bodies stay per-family templates on purpose.  Plain RoPE has hand-tuned
bodies (NumPy: complex views and cache-sized blocks, also what ``rope_apply``
runs; torch: an autograd Function, shared tables, ``out=`` and in place; C: a
fused pass over a table), whose speed comes from layouts a general variant
(custom blocks, scales, several axes) cannot use; the variant and call-length
bodies are general and plain.  What varies between them is only the body:
expressions are printed by the SymPy printer subclasses of :mod:`._printers`,
numbers by :func:`floats`, module names by :func:`module_name`.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, replace
from typing import Any

from .._ground._errors import InvalidInputError
from .._ground._io import write_owned_files
from .._ground._provenance import render_header, with_unproved

__all__ = ["TARGETS", "FAMILIES", "FAMILY_TARGETS", "SUFFIXES", "Kernel", "kernel_files", "write_kernel", "file_name",
           "module_name", "floats", "float_rows", "check_target_name"]

TARGETS = ("numpy", "c", "torch", "triton")
#: body generator of each family: a module of this package with ``bodies(payload, module, target)``
FAMILIES = {"rope": "_rope", "variant": "_variant", "call-length": "_call_length", "model": "_model",
            "dense": "_dense", "bias-axes": "_bias_axes"}
#: the targets a family's generator prints (Triton: plain RoPE only)
FAMILY_TARGETS = {"rope": TARGETS, "variant": ("numpy", "c", "torch"), "call-length": ("numpy", "c", "torch"),
                  "model": ("numpy", "c", "torch"), "dense": ("numpy", "c", "torch"),
                  "bias-axes": ("numpy", "torch")}
#: the file of each target (plain RoPE's C target also writes ``{module}.h``)
SUFFIXES = {"numpy": ".py", "torch": "_torch.py", "c": ".c", "triton": "_triton.py"}


@dataclass(frozen=True)
class Kernel:
    """What one exported kernel is generated from.

    ``family``: which body generator prints it (a key of :data:`FAMILIES`); ``payload``: what the
    body is printed from (a ``RopeSpec`` for ``rope``, a model config's ``ModelRope`` for ``model``, a
    ``Variant`` otherwise); ``module``: the
    stem of the file names (an identifier); ``provenance``: the header lines, as
    :mod:`symproof._ground._provenance` assembles them (text only: escaped when printed)."""

    family: str
    payload: Any
    module: str
    provenance: tuple

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise InvalidInputError(f"internal: unknown kernel family {self.family!r}")
        if not self.module.isidentifier():
            raise InvalidInputError(f"kernel file name {self.module!r} must be a valid identifier")


def check_target_name(target: str) -> None:
    if target not in TARGETS:
        raise InvalidInputError(f"unknown target {target!r}; expected one of {TARGETS}", target=target)


def kernel_files(kernel: Kernel, target: str) -> dict:
    """``{file name: text}``: the header of ``kernel.provenance`` for ``target``, then the body."""
    check_target_name(target)
    if target not in FAMILY_TARGETS[kernel.family]:
        raise InvalidInputError(f"the {target} target exports plain RoPE only; a {kernel.family} kernel has the "
                                f"targets {FAMILY_TARGETS[kernel.family]}", target=target)
    generator = importlib.import_module(f".{FAMILIES[kernel.family]}", __name__)
    header = render_header(kernel.provenance, target)
    return {name: header + body for name, body in generator.bodies(kernel.payload, kernel.module, target).items()}


def write_kernel(kernel: Kernel, target: str, folder, *, option: str, force: bool = False, unproved=(),
                 allow_unproved: bool = False) -> list:
    """Write :func:`kernel_files` into ``folder`` (recorded in its manifest); return the paths written.

    ``unproved``: ``(property, verdict, reason)`` of each property the kernel rests on that is not
    proved.  Such a kernel is not written, unless ``allow_unproved``: then its header says which and
    why.  ``force``: replace same-name files symproof did not write (see ``write_owned_files``)."""
    unproved = tuple(unproved)
    if unproved and not allow_unproved:
        name, verdict, reason = unproved[0]
        more = f" (and {len(unproved) - 1} more)" if len(unproved) > 1 else ""
        raise InvalidInputError(f"refusing to write the kernel {kernel.module}: its property {name!r} is {verdict}"
                                f"{more}{f' ({reason})' if reason else ''}; --allow-unproved writes it with a "
                                "header saying so")
    if unproved:
        kernel = replace(kernel, provenance=tuple(with_unproved(kernel.provenance, unproved)))
    files = kernel_files(kernel, target)
    return write_owned_files(folder, {name: text.encode("utf-8") for name, text in files.items()},
                             group=f"export:{kernel.module}:{target}", option=option, force=force)


def file_name(module: str, target: str) -> str:
    """The main file of ``module`` for ``target``."""
    return module + SUFFIXES[target]


_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


def module_name(prefix: str, name: str) -> str:
    """``prefix`` + ``name`` with ``-`` (allowed in variant names) as ``_``: an identifier."""
    return prefix + _NOT_IDENTIFIER.sub("_", name)


def floats(values) -> str:
    """``values`` as float64 literals, comma-separated (``repr`` of a float reads back exactly)."""
    return ", ".join(repr(float(v)) for v in values)


def float_rows(values, per_row: int = 4, indent: str = "    ") -> str:
    """``values`` as a bracketed list of float64 literals, ``per_row`` to a line."""
    values = list(values)
    rows = [floats(values[k:k + per_row]) for k in range(0, len(values), per_row)]
    return "[\n" + "".join(f"{indent}{row},\n" for row in rows) + "]"
