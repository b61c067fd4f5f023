"""Malformed descriptions are refused with a VariantFileError naming the file, the key and what was expected."""

import pytest
import sympy as sp

from symproof import VariantFileError
from symproof.variants import load_variant
from symproof.variants._spec import loads_variant

GOOD = """name = "ok"
kind = "rotary"
width = 8
pairing = "adjacent"
[frequencies]
rule = "geometric"
base = 10000
"""

CASES = [
    # (document, key named, words of what was expected)
    (GOOD + "colour = 1\n", "frequencies.colour", "unknown key"),
    ("colour = 1\n" + GOOD, "colour", "unknown key"),
    (GOOD.replace("width = 8", "width = 7"), "width", "even integer"),
    (GOOD.replace("width = 8", 'width = "8"'), "width", "expected an integer"),
    (GOOD.replace("width = 8", "width = true"), "width", "got a boolean"),
    (GOOD.replace('kind = "rotary"', 'kind = "magic"'), "kind", "expected one of"),
    (GOOD.replace('name = "ok"\n', ""), "name", "is required"),
    (GOOD.replace('name = "ok"', 'name = "Bad Name!"'), "name", "lower-case"),
    (GOOD + "rotated_width = 4\n", "frequencies.rotated_width", "unknown key"),
    (GOOD.replace("width = 8", "width = 8\nrotated_width = 4"), "frequencies.denominator", "partial rotation"),
    (GOOD.replace("width = 8", "width = 8\nrotated_width = 16"), "rotated_width", "<= width"),
    # the exponent's width may be odd (HF's int(head * factor)), but it is a width: 1 or more
    (GOOD.replace("width = 8", "width = 8\nrotated_width = 4") + "denominator = 0\n", "frequencies.denominator",
     "expected an integer between 1 and"),
    (GOOD.replace('pairing = "adjacent"', 'pairing = "diagonal"'), "pairing", "expected one of"),
    # a rotary file that leaves the pairing out would silently get one of two different kernels
    (GOOD.replace('pairing = "adjacent"\n', ""), "pairing", "'half' = pairs (r, r + d/2)"),
    (GOOD + "factors = [1, 2]\n", "frequencies.factors", "expected 4 values"),
    (GOOD + "factors = [1, 2, 0, 1]\n", "frequencies.factors[2]", "positive finite"),
    (GOOD + "[length]\nlong_factors = [1, 1, 1, 1]\n", "length.threshold", "is required"),
    (GOOD + "[length]\nthreshold = 0\n", "length.threshold", "between 1 and"),
    (GOOD + "[length]\nthreshold = 64\nlong_factors = [1, 1, 1, 1]\n", "length.long_factors",
     "needs frequencies.factors"),
    (GOOD.replace("base = 10000", 'base = "10000 * seq_len"'), "frequencies.base", "unknown name 'seq_len'"),
    (GOOD + '[equivalent]\nbias = "0"\n', "equivalent.bias", "kind = 'bias' only"),
    ('name = "b"\nkind = "bias"\n[bias]\nformula = "slope*j"\nheads = 2\nslope = "1"\n[equivalent]\nname = "x"\n',
     "equivalent.bias", "is required"),
    (GOOD.replace('rule = "geometric"', 'rule = "magic"'), "frequencies.rule", "expected one of"),
    (GOOD.replace("base = 10000", 'base = "10000 +"'), "frequencies.base", "is not a formula"),
    (GOOD.replace("base = 10000", 'base = "beta"'), "frequencies.base", "unknown name 'beta'"),
    (GOOD.replace('rule = "geometric"\nbase = 10000', 'rule = "list"\nvalues = [1, 0.1]'),
     "frequencies.values", "expected 4 values"),
    (GOOD.replace('rule = "geometric"\nbase = 10000', 'rule = "list"\nvalues = [1, 0.1, true, 2]'),
     "frequencies.values[2]", "a number or a formula"),
    (GOOD.replace('rule = "geometric"\nbase = 10000', 'rule = "formula"\nformula = "sqrt(-1 - r)"'),
     "frequencies.formula", "finite real"),
    (GOOD + "[params]\nr = 2\n", "params.r", "fixed meaning"),
    (GOOD + '[params]\ns = "t + 1"\n', "params.s", "unknown name 't'"),
    (GOOD + '[position]\ntransform = "m / s"\n', "position.transform", "unknown name 's'"),
    (GOOD + '[position]\naxes = ["row", "col"]\n', "position.axis", "is required"),
    (GOOD + '[position]\naxes = ["row", "col"]\naxis = "r"\n', "position.axis", "axis index"),
    (GOOD + '[rotation]\nblock = [["cos(x)"]]\n', "rotation.block", "2x2"),
    # a rotary file may add a bias to each head's score, once it counts its heads
    (GOOD + '[bias]\nformula = "0"\n', "bias", "needs the head count: write heads = N at the top level"),
    (GOOD + "[scale]\nquery = [1]\n", "scale.query", "formula string or a number"),
    (GOOD + '[equivalent]\nname = "$\\\\input{/etc/passwd}$"\nfrequencies = "1"\n', "equivalent.name", "plain text"),
    (GOOD + '[equivalent]\nname = "a\\u001b[31m"\nfrequencies = "1"\n', "equivalent.name", "control characters"),
    ('name = "b"\nkind = "bias"\n[bias]\nformula = "-slope*abs(j-i)"\nheads = 0\nslope = "1"\n', "bias.heads",
     "between 1 and"),
    ('name = "b"\nkind = "bias"\n[bias]\nformula = "-slope*abs(j-i)"\nheads = 2\n', "bias.slope", "is required"),
    ('name = "b"\nkind = "bias"\nwidth = 8\n', "width", "does not apply"),
    ('name = "a"\nkind = "additive"\nwidth = 8\npairing = "half"\n[frequencies]\nbase = 10\n', "pairing",
     "concatenated"),
    ('name = "a"\nkind = "additive"\nwidth = 8\n[frequencies]\nbase = 10\n[scale]\nquery = 1\n', "scale",
     "does not apply"),
]


@pytest.mark.parametrize("document, key, words", CASES, ids=[c[1] + f"-{k}" for k, c in enumerate(CASES)])
def test_malformed_file_is_refused_with_its_key(tmp_path, document, key, words):
    path = tmp_path / "variant.toml"
    path.write_text(document, encoding="utf-8")
    with pytest.raises(VariantFileError) as info:
        load_variant(path)
    message = str(info.value)
    assert str(path) in message and f"'{key}'" in message and words in message, message


def test_not_toml(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("name = \n", encoding="utf-8")
    with pytest.raises(VariantFileError, match="not valid TOML"):
        load_variant(path)


def test_missing_file(tmp_path):
    with pytest.raises(VariantFileError, match="no such file"):
        load_variant(tmp_path / "absent.toml")


def test_the_good_file_loads(tmp_path):
    path = tmp_path / "variant.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_variant(path).n_pairs == 4


def _reserved_names():
    from symproof.variants._format import RESERVED

    return sorted(RESERVED)


@pytest.mark.parametrize("name", _reserved_names())
def test_a_reserved_parameter_name_is_refused_with_a_rename_that_works(tmp_path, name):
    """A paper's E or d as a parameter: the refusal says what the name means and a rename that loads."""
    text = GOOD.replace("base = 10000", f'base = "10000 * {name}"') + f"[params]\n{name} = 2\n"
    path = tmp_path / "v.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VariantFileError) as info:
        load_variant(str(path))
    message = str(info.value)
    assert f"params.{name}" in message and "fixed meaning" in message and "(" in message, message
    rename = message.split("rename the parameter (", 1)[1].split(",", 1)[0]
    path.write_text(GOOD.replace("base = 10000", f'base = "10000 * {rename}"') + f"[params]\n{rename} = 2\n",
                    encoding="utf-8")
    assert load_variant(str(path)).params[rename] == 2


def _nearest_forms():
    from symproof.variants._formula import NEAREST_FORMS

    return sorted(NEAREST_FORMS.items())


def _instance(form: str) -> str:
    """The suggested form with its placeholders filled, as a user would write it for a frequency."""
    import re

    form = form.split(" (", 1)[0]
    fill = {"a": "(r + 3)", "b": "2", "x": "(r + 2)", "low": "0", "high": "1", "c": "(r > 1)"}
    return re.sub(r"\b(a|b|x|low|high|c)\b", lambda m: fill[m.group(1)], form)


@pytest.mark.parametrize("name, form", _nearest_forms(), ids=[name for name, _ in _nearest_forms()])
def test_a_function_outside_the_language_is_refused_with_a_form_that_loads(tmp_path, name, form):
    """mod, sign, round ...: the refusal says the function is outside the language and how to write it, and
    what it says to write loads."""
    arguments = {"clamp": "r, 0, 1", "clip_by_value": "r, 0, 1", "if_else": "r > 1, 1, 2"}.get(name, "r + 1")
    if name in ("mod", "Mod", "fmod", "pow", "maximum", "minimum"):
        arguments = "r + 3, 2"
    path = tmp_path / "v.toml"
    path.write_text(GOOD.replace("base = 10000", f'base = "10000 * (2 + {name}({arguments}))"'), encoding="utf-8")
    with pytest.raises(VariantFileError) as info:
        load_variant(str(path))
    assert "outside the formula language; write it as" in str(info.value), str(info.value)
    written = _instance(form)
    path.write_text(GOOD.replace("base = 10000", f'base = "10000 * (2 + abs({written}))"'), encoding="utf-8")
    assert load_variant(str(path)).kind == "rotary", written


def test_a_percent_sign_is_refused_with_the_mod_form():
    from symproof.variants._formula import parse_formula

    with pytest.raises(VariantFileError, match=r"write a % b as mod\(a, b\)"):
        parse_formula("r % 2", names={"r"})


def test_an_odd_denominator_is_read_as_the_exponent_s_width():
    # GLM-4.5's class defaults: 11 frequencies 10000^(-2r/21) on 22 rotated coordinates of a 42-wide head
    document = GOOD.replace("width = 8", "width = 42\nrotated_width = 22") + "denominator = 21\n"
    variant = loads_variant(document, "<odd>")
    frequencies = variant.frequencies()
    assert variant.freq_denominator == 21 and len(frequencies) == 11
    assert all(sp.expand(w**21) == sp.Rational(1, 10000**(2 * r)) for r, w in enumerate(frequencies))
