"""Plain RoPE bodies: the dispatcher's ``rope`` family.

The NumPy body is :mod:`._rope_numpy` (also what ``rope_apply`` runs), the
PyTorch body :mod:`._rope_torch` (which runs the C body on CPU tensors),
the Triton body :mod:`._rope_triton`, the C99 pair ``{module}.c``/``{module}.h``
:mod:`._rope_c`.
"""

from __future__ import annotations

from ._symbolic import RopeSpec
from . import file_name
from ._rope_c import rope_c_bodies

__all__ = ["bodies"]


def bodies(spec: RopeSpec, module: str, target: str) -> dict:
    """``{file name: body}`` of plain RoPE ``spec`` for ``target``."""
    if target == "numpy":
        from ._rope_numpy import rope_numpy_body

        return {file_name(module, target): rope_numpy_body(spec)}
    if target == "torch":
        from ._rope_torch import rope_torch_body

        return {file_name(module, target): rope_torch_body(spec)}
    if target == "triton":
        from ._rope_triton import rope_triton_body

        return {file_name(module, target): rope_triton_body(spec)}
    c_body, h_body = rope_c_bodies(spec, module)
    return {file_name(module, target): c_body, f"{module}.h": h_body}
