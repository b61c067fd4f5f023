"""What the parser's schema cannot say about each key of a variant file: default, allowed values, an example.

The keys and their types come from the parser itself (``_TOP`` and ``_TABLES`` in
``symproof/variants/_format.py``); the build stops when a key is on one side only, so a key added to the
parser must be described here.  (key -> (default, allowed values, example))
"""

KEY_DOCS = {
    "name": ("required", "lower-case letters, digits, `-`, `_`; at most 64 characters", 'name = "my-rope"'),
    "title": ("the name", "any text", 'title = "RoPE, base 500000"'),
    "description": ("empty", "any text", 'description = "from the paper, eq. 3"'),
    "kind": ("required", "`rotary`, `additive`, `bias`, `dense`", 'kind = "rotary"'),
    "width": ("required (rotary, additive, dense)", "an even integer 2..8192: the head width (rotary) or model width; "
              "dense: an integer 1..32, the size of each generator", "width = 64"),
    "rotated_width": ("`width`", "an even integer <= width (rotary only)", "rotated_width = 16"),
    "pairing": ("required (rotary); `adjacent` (additive)",
                "rotary: `adjacent` (2r, 2r+1) or `half` (r, r + d/2); additive: `adjacent` or `concatenated`",
                'pairing = "half"'),
    "positions": ("`integers`", "`integers` (every integer), `nonnegative`, or a range `0..N` (N from 1 to 2^53 - 1)",
                  'positions = "0..4095"'),
    "params": ("none", "at most 256 names, each a number, a formula in earlier ones, or an array (a lookup "
                       "table `T(k)`)", "[params] s = 4"),
    "frequencies.rule": ("`geometric`", "`geometric`, `formula`, `list`, `per_axis`", 'rule = "formula"'),
    "frequencies.base": ("required (rule `geometric`)", "a positive number or a formula",
                         'base = "10000 * s**(d/(d-2))"'),
    "frequencies.denominator": ("`width` (required when rotated_width < width)", "an even integer",
                                "denominator = 16"),
    "frequencies.formula": ("-", "a formula in `r` and the widths (rule `formula`)",
                            'formula = "10000**(-2*r/d) / 4"'),
    "frequencies.values": ("-", "one number per pair (rule `list`)", "values = [1, 0.1, 0.01, 0.001]"),
    "frequencies.let": ("none", "at most 64 named formulas, each may use the earlier ones (chains of at most 8)",
                        '[frequencies.let] low = "2*pi/4096"'),
    "frequencies.factors": ("none", "one positive number per pair: pair r's frequency divided by factors[r]",
                            "factors = [1, 1, 1.25, 2]"),
    "frequencies.per_axis": ("-", "rows `[r][a]` of numbers, or a formula in `r` and `a` (rule `per_axis`)",
                             "per_axis = [[0.91, 0.40], [-0.29, 0.51]]"),
    "position.transform": ("`m`", "a formula in the position `m`", 'transform = "m / 4"'),
    "position.axes": ('`["m"]`', "1 to 4 axis names", 'axes = ["row", "col"]'),
    "position.axis": ("required with several axes", "a formula in `r` giving the axis pair r rotates with", 'axis = "floor(2*r/n)"'),
    "position.relative": ("none", "a formula in `i`, `j` replacing `i - j` in the rotary angle",
                          'relative = "Min(i - j, 512)"'),
    "position.causal": ("false", "`true` or `false` (with `relative`): only keys j <= i are scored",
                        "causal = true"),
    "scale.query": ("1", "a formula in `m`, `r` and the widths", 'query = "zeta**(m/B)"'),
    "scale.key": ("1", "a formula in `m`, `r` and the widths", 'key = "zeta**(-m/B)"'),
    "attention.factor": ("1", "a number or a formula in the widths", 'factor = "0.1*log(s) + 1"'),
    "rotation.block": ("the rotation R(x)", "2x2 formulas in the angle `x`, `r` and the position `m`",
                       'block = [["cos(x)", "-sin(x)"], ["sin(x)", "cos(x)"]]'),
    "bias.formula": ("required (bias)", "a formula in `i`, `j`, `slope`, `h`, `heads`",
                     'formula = "-slope * abs(j - i)"'),
    "bias.heads": ("required (bias)", "an integer 1..1024", "heads = 8"),
    "bias.axes": ("one axis (the formula reads `i`, `j`)", "2 to 4 coordinate names: positions are vectors, the "
                  "formula reads `i_NAME`, `j_NAME` (Swin's 2-D table)", 'axes = ["y", "x"]'),
    "bias.slope": ("required (bias)", "a formula in `h`, `heads` (`\"1\"` when the formula has none)",
                   'slope = "2**(-8*(h + 1)/heads)"'),
    "equivalent.name": ("`the stated frequencies`", "plain text, at most 120 characters",
                        'name = "RoPE with every frequency divided by s"'),
    "equivalent.frequencies": ("-", "a formula in `r` and the widths: the named scheme's frequencies",
                               'frequencies = "10000**(-2*r/d) / s"'),
    "equivalent.bias": ("-", "a formula like `bias.formula`: equal under a causal softmax",
                        'bias = "-slope * (i - j)"'),
    "equivalent.per_axis": ("-", "like `frequencies.per_axis` (with rule `per_axis`)",
                            'per_axis = "10**(-4*r/d)"'),
    "length.threshold": ("required with [length]", "an integer 1..2^31: the call length the rule changes at",
                         "threshold = 4096"),
    "length.long_factors": ("none", "one number per pair, used once seq_len > threshold",
                            "long_factors = [1, 2, 4, 8]"),
    "dense.generator": ("required with one axis (or `generators`)",
                        "a width x width matrix of numbers or formulas in `[params]`: R(m) = exp(m A)",
                        "generator = [[0, -1], [1, 0]]"),
    "dense.generators": ("required with several axes (or `generator`)",
                         "one width x width matrix per `position.axes` name, in that order: "
                         "R(m) = exp(sum_a m_a A_a)", "generators = [[[0, -1], [1, 0]], [[0, -2], [2, 0]]]"),
}

#: what each table of a variant file states
TABLE_DOCS = {
    "frequencies": "the frequency of each pair: a rule and its numbers",
    "position": "the position a token is rotated by: a transform, several axes, or a relative position",
    "scale": "a per-position scale of queries and keys (xPos)",
    "attention": "a factor multiplying rotated queries and keys",
    "rotation": "the 2x2 block applied to each pair (default: the rotation)",
    "bias": "an additive attention bias per head (ALiBi, T5, KERPLE)",
    "equivalent": "a named scheme the file should equal (the `equivalence` property)",
    "length": "rules that read the call's length `seq_len` (dynamic NTK, LongRoPE's switch)",
    "dense": "the generators of a dense rotation exp(sum_a m_a A_a) of the whole head (LieRE, STRING)",
}
