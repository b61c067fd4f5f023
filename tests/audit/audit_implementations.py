"""User-style RoPE implementations (NumPy and PyTorch), model descriptions and the audit test cases.

Each implementation is source text, as a user would write it, with its
conventions as module constants: the tests write it to ``tmp_path`` and audit
the file, through :func:`symproof.audit` or the ``symproof audit`` command.
``$NAME`` placeholders are filled from :data:`DEFAULTS` updated by the case.
"""

from __future__ import annotations

import string

DEFAULTS = {"rot": "None", "base": "10000.0", "den": "None", "offset": "0", "sign": "1", "scale": "1.0",
            "dtype": "float64", "post": "out", "pscale": "1", "neg": "-1"}

HEADER = """
ROT = $rot        # rotated coordinates (None: the whole head)
BASE = $base
DEN = $den        # width in the exponent base^(-2r/DEN) (None: ROT)
OFFSET = $offset  # added to every position
SIGN = $sign
SCALE = $scale    # multiplies cos and sin
POSITION_SCALE = $pscale  # positions are divided by it (linear interpolation)
"""

SOURCES = {
    # Hugging Face style: x * cos + rotate_half(x) * sin, cos = cat(freqs, freqs)
    ("numpy", "rotate_half"): """
import numpy as np
$header
DTYPE = np.$dtype  # angle arithmetic


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([$neg * x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, positions):
    d = x.shape[-1]
    rot = d if ROT is None else ROT
    den = rot if DEN is None else DEN
    inv_freq = 1.0 / BASE ** (np.arange(0, rot, 2, dtype=np.float64) / den)
    freqs = (np.asarray(positions).astype(DTYPE)[..., None] / DTYPE(POSITION_SCALE) + DTYPE(OFFSET)) * inv_freq.astype(DTYPE)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos = np.cos(emb).astype(x.dtype) * SCALE
    sin = SIGN * np.sin(emb).astype(x.dtype) * SCALE
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    out = np.concatenate([x_rot * cos + rotate_half(x_rot) * sin, x_pass], axis=-1)
    return $post
""",
    ("torch", "rotate_half"): """
import torch
$header
DTYPE = torch.$dtype  # angle arithmetic


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat(($neg * x2, x1), dim=-1)


def apply_rope(x, positions):
    d = x.shape[-1]
    rot = d if ROT is None else ROT
    den = rot if DEN is None else DEN
    inv_freq = 1.0 / (BASE ** (torch.arange(0, rot, 2, dtype=torch.int64).float() / den))
    freqs = (positions.to(DTYPE)[..., None] / POSITION_SCALE + OFFSET) * inv_freq.to(DTYPE)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(x.dtype) * SCALE
    sin = SIGN * emb.sin().to(x.dtype) * SCALE
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    out = torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)
    return $post
""",
    # Meta style: adjacent pairs as complex numbers times exp(i m theta)
    ("numpy", "complex"): """
import numpy as np
$header


def apply_rope(x, positions):
    d = x.shape[-1]
    rot = d if ROT is None else ROT
    den = rot if DEN is None else DEN
    freqs = 1.0 / (BASE ** (np.arange(0, rot, 2)[: rot // 2].astype(np.float32) / den))
    angles = (np.asarray(positions, dtype=np.float32)[..., None] / POSITION_SCALE + OFFSET) * freqs
    freqs_cis = SCALE * np.exp(SIGN * 1j * angles).astype(np.complex64)
    xc = x[..., :rot].astype(np.float32).reshape(*x.shape[:-1], -1, 2)
    xc = xc[..., 0] + 1j * xc[..., 1]
    rotated = xc * freqs_cis
    out = x.copy()
    out[..., 0:rot:2], out[..., 1:rot:2] = rotated.real, rotated.imag
    return $post
""",
    ("torch", "complex"): """
import torch
$header


def precompute_freqs_cis(dim, end, theta, den):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / den))
    t = torch.arange(end, dtype=torch.float32) / POSITION_SCALE + OFFSET
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs) * SCALE, SIGN * freqs)


def apply_rope(x, positions):
    d = x.shape[-1]
    rot = d if ROT is None else ROT
    den = rot if DEN is None else DEN
    freqs_cis = precompute_freqs_cis(rot, int(positions.max()) + 1, BASE, den)[positions]
    xc = torch.view_as_complex(x[..., :rot].float().reshape(*x.shape[:-1], -1, 2).contiguous())
    rotated = torch.view_as_real(xc * freqs_cis).flatten(-2).type_as(x)
    out = torch.cat((rotated, x[..., rot:]), dim=-1)
    return $post
""",
    # GPT-J style: rotate_every_two on the first ROT coordinates, sin/cos repeated per pair
    ("numpy", "every_two"): """
import numpy as np
$header


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return np.stack((-x2, x1), axis=-1).reshape(x.shape)


def apply_rope(x, positions):
    d = x.shape[-1]
    rot = d if ROT is None else ROT
    den = rot if DEN is None else DEN
    inv_freq = 1.0 / (BASE ** (np.arange(0, rot, 2) / den))
    sinusoid = (np.asarray(positions, dtype=np.float64)[..., None] / POSITION_SCALE + OFFSET) * inv_freq
    sin = np.repeat(SIGN * np.sin(sinusoid) * SCALE, 2, axis=-1)
    cos = np.repeat(np.cos(sinusoid) * SCALE, 2, axis=-1)
    x_rot = x[..., :rot]
    out = np.concatenate([x_rot * cos + rotate_every_two(x_rot) * sin, x[..., rot:]], axis=-1)
    return $post
""",
    ("torch", "every_two"): """
import torch
$header


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, positions):
    d = x.shape[-1]
    rot = d if ROT is None else ROT
    den = rot if DEN is None else DEN
    inv_freq = 1.0 / (BASE ** (torch.arange(0, rot, 2).float() / den))
    sinusoid = (positions.float()[..., None] / POSITION_SCALE + OFFSET) * inv_freq
    sin = torch.repeat_interleave(SIGN * sinusoid.sin() * SCALE, 2, dim=-1).to(x.dtype)
    cos = torch.repeat_interleave(sinusoid.cos() * SCALE, 2, dim=-1).to(x.dtype)
    x_rot = x[..., :rot]
    out = torch.cat((x_rot * cos + rotate_every_two(x_rot) * sin, x[..., rot:]), dim=-1)
    return $post
""",
}

#: the declared models, as variant files (pairing always written out)
MODELS = {
    "hf": """name = "hf-llama"
kind = "rotary"
width = 64
pairing = "half"

[frequencies]
rule = "geometric"
base = 10000
""",
    "meta": """name = "meta-llama"
kind = "rotary"
width = 64
pairing = "adjacent"

[frequencies]
rule = "geometric"
base = 10000
""",
    "neox": """name = "neox-partial"
kind = "rotary"
width = 64
rotated_width = 16
pairing = "half"

[frequencies]
rule = "geometric"
base = 10000
denominator = 16
""",
    "gptj": """name = "gptj-partial"
kind = "rotary"
width = 64
rotated_width = 16
pairing = "adjacent"

[frequencies]
rule = "geometric"
base = 10000
denominator = 16
""",
    "hf_scaled": """name = "hf-attention-factor"
kind = "rotary"
width = 64
pairing = "half"

[frequencies]
rule = "geometric"
base = 10000

[attention]
factor = "5/4"
""",
    "hf256": """name = "hf-256"
kind = "rotary"
width = 256
pairing = "half"

[frequencies]
rule = "geometric"
base = 500000
""",
    "interpolated": """name = "interpolated"
kind = "rotary"
width = 64
pairing = "half"

[params]
s = 4

[frequencies]
rule = "geometric"
base = 10000

[position]
transform = "m / s"
""",
}


def implementation_source(library: str, style: str, **params) -> str:
    values = {**DEFAULTS, **{k: str(v) for k, v in params.items()}}
    header = string.Template(HEADER).substitute(values)
    return string.Template(SOURCES[(library, style)]).substitute({**values, "header": header})


# -- cases: (id, style, params, model, verdict, whats) ---------------------------------------------

LIBRARIES = ("numpy", "torch")

RIGHT = [
    ("hf-rotate-half", "rotate_half", {}, "hf", "equivalent", set()),
    ("hf-float32-angles", "rotate_half", {"dtype": "float32"}, "hf", "equivalent", set()),
    ("meta-complex", "complex", {}, "meta", "equivalent", set()),
    ("gptj-interleaved-partial", "every_two", {"rot": 16}, "gptj", "equivalent", set()),
    ("neox-partial", "rotate_half", {"rot": 16}, "neox", "equivalent", set()),
    ("hf-scaled", "rotate_half", {"scale": 1.25}, "hf_scaled", "equivalent", set()),
    ("interpolated", "rotate_half", {"pscale": 4}, "interpolated", "equivalent", set()),
    ("interpolated-meta", "complex", {"pscale": 4}, "interpolated", "equivalent_after_relayout", set()),
    ("port-meta-to-rotate-half", "rotate_half", {}, "meta", "equivalent_after_relayout", set()),
    ("port-hf-to-complex", "complex", {}, "hf", "equivalent_after_relayout", set()),
    ("port-hf-to-every-two", "every_two", {}, "hf", "equivalent_after_relayout", set()),
]

WRONG = [
    ("pairing-partial", "every_two", {"rot": 16}, "neox", "differs", {"pairing"}),
    ("rotate-half-without-minus", "rotate_half", {"neg": 1}, "hf", "differs", {"pairing"}),
    ("denominator-head-width", "rotate_half", {"rot": 16, "den": 64}, "neox", "differs", {"denominator"}),
    ("denominator-gptj", "every_two", {"rot": 16, "den": 64}, "gptj", "differs", {"denominator"}),
    ("position-from-1", "rotate_half", {"offset": 1}, "hf", "differs", {"position_offset"}),
    ("position-from-1-meta", "complex", {"offset": 1}, "meta", "differs", {"position_offset"}),
    ("sign-flipped", "rotate_half", {"sign": -1}, "hf", "differs", {"direction"}),
    ("sign-flipped-meta", "complex", {"sign": -1}, "meta", "differs", {"direction"}),
    ("float16-angles", "rotate_half", {"dtype": "float16"}, "hf", "differs", {"precision"}),
    ("wrong-rotary-dim", "rotate_half", {"rot": 32}, "neox", "differs", {"rotary_dim"}),
    ("whole-head-rotated", "every_two", {}, "gptj", "differs", {"rotary_dim"}),
    ("wrong-base", "rotate_half", {"base": "500000.0"}, "hf", "differs", {"frequency"}),
    ("wrong-base-meta", "complex", {"base": "500000.0"}, "meta", "differs", {"frequency"}),
    ("missing-attention-scaling", "rotate_half", {}, "hf_scaled", "differs", {"scaling"}),
    ("extra-scaling", "rotate_half", {"scale": 1.1}, "hf", "differs", {"scaling"}),
    ("missing-interpolation", "rotate_half", {}, "interpolated", "differs", {"frequency"}),
    ("nonlinear-tanh", "rotate_half", {"post": "TANH(out)"}, "hf", "differs", {"nonlinear"}),
    ("nonlinear-normalised", "every_two", {"post": "out / (1 + (x * x).sum(-1, keepdims=True))"}, "meta",
     "differs", {"nonlinear"}),
]

TORCH_ONLY = [
    ("bfloat16-angles", "rotate_half", {"dtype": "bfloat16"}, "hf", "differs", {"precision"}),
    ("float16-angles-torch", "rotate_half", {"dtype": "float16"}, "hf", "differs", {"precision"}),
]


def library_params(library: str, params: dict) -> dict:
    """Library-specific spellings inside ``post`` expressions."""
    post = params.get("post")
    if post is None:
        return params
    if library == "torch":
        post = post.replace("TANH", "torch.tanh").replace("keepdims", "keepdim")
    else:
        post = post.replace("TANH", "np.tanh")
    return {**params, "post": post}
