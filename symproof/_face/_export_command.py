"""``symproof export KERNEL --target T --out DIR``: the options checked, the files written, their paths printed
(:mod:`symproof.kernels` generates and writes the kernel).
"""

from __future__ import annotations

from .._export import file_name
from .._ground._io import check_owned_files, output_folder
from .._ground._text import one_line
from ..kernels._export import check_export_options, export_kernel

__all__ = ["main_export"]


def main_export(args) -> int:
    """``symproof export KERNEL --target T --out DIR [...]``: write the files, print their paths."""
    check_export_options(args.kernel, args.head_dim, args.rotary_dim, getattr(args, "denominator", None), args.base)
    out = output_folder(args.out, "--out")
    check_owned_files(out, [file_name(f"symproof_{args.kernel}", args.target)], option="--out")
    options = dict(head_dim=args.head_dim, rotary_dim=args.rotary_dim, base=args.base,
                   denominator=getattr(args, "denominator", None), pairing=args.pairing,
                   dtype=getattr(args, "dtype", None))
    for path in export_kernel(args.kernel, args.target, out, force=bool(getattr(args, "force", False)),
                              allow_unproved=bool(getattr(args, "allow_unproved", False)), **options):
        print(one_line(path))
    return 0
