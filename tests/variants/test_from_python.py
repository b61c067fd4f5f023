"""A variant from a notebook: ``Variant.from_dict`` takes NumPy tables and numbers, ``from_toml`` a path or text."""

import numpy as np
import pytest

from symproof import Variant, VariantFileError

ROOT = {"name": "t", "kind": "rotary", "width": 8, "pairing": "half",
        "frequencies": {"rule": "formula", "formula": "k * tab(r) / 2"}}
TABLE = [1.0, 0.5, 0.25, 0.125]

CASES = [
    # (params as a notebook writes them, as the file would)
    ({"tab": np.array(TABLE), "k": np.float64(2.0)}, {"tab": TABLE, "k": 2.0}),
    ({"tab": np.array([1, 2, 3, 4], dtype=np.int32), "k": np.int64(3)}, {"tab": [1, 2, 3, 4], "k": 3}),
    ({"tab": np.array(TABLE, dtype=np.float32), "k": 1}, {"tab": [float(np.float32(v)) for v in TABLE], "k": 1}),
    ({"tab": tuple(TABLE), "k": np.float64(0.1)}, {"tab": TABLE, "k": 0.1}),
]


@pytest.mark.parametrize("notebook, written", CASES, ids=["float64", "int", "float32", "tuple"])
def test_numpy_values_read_exactly_as_the_same_numbers_in_a_file(notebook, written):
    ours = Variant.from_dict({**ROOT, "params": notebook})
    theirs = Variant.from_dict({**ROOT, "params": written})
    assert ours.describe() == theirs.describe()
    assert [ours.exact_value(r) for r in range(4)] == [theirs.exact_value(r) for r in range(4)]


def test_a_table_of_rows_is_refused_naming_the_entry():
    with pytest.raises(VariantFileError, match=r"params\.tab\[0\]"):
        Variant.from_dict({**ROOT, "params": {"tab": np.ones((4, 2)), "k": 1}})


def test_from_toml_takes_a_path_or_the_text(tmp_path):
    text = ('name = "t"\nkind = "rotary"\nwidth = 8\npairing = "half"\n[frequencies]\nrule = "geometric"\n'
            "base = 10000\n")
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    from_path, from_text = Variant.from_toml(str(path)).describe(), Variant.from_toml(text).describe()
    assert from_path.pop("source") == str(path) and from_text.pop("source") == "<text>"
    assert from_path == from_text
    assert Variant.from_toml(path).name == "t"
