

def test_the_readme_table_is_the_family_table():
    from pathlib import Path

    from symproof.variants._families import family_table

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- families:start -->\n", 1)[1].split("\n<!-- families:end -->", 1)[0]
    assert table == family_table()
