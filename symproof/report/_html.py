"""The report as one self-contained HTML page: MathML for math, inline SVG for figures.

No script, no stylesheet or font from the network: the page renders offline in
any current browser (MathML Core is native in Chromium, Firefox and Safari).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import sympy as sp
from markupsafe import Markup, escape

from ._formulas import mathml_relation, to_mathml
from ._printers import MINUS, _mathml_inner, _wrap_math
from ._prose import CLAIM_ID, latex_to_mathml, split_prose
from ._templates import environment
from ._typeset import TextPrinter, tactic_phrase

__all__ = ["render_html", "statement_is_prose"]

_WORD = re.compile(r"[A-Za-z]{4,}")


def statement_is_prose(text: str) -> bool:
    """A statement or assumption string is LaTeX math unless it reads as words.

    Strings with ``$...$`` mix prose and math; strings without a backslash
    that contain a word of four letters or more are prose (``"i, j integers"``);
    everything else is one formula (``"m > 0"``, ``"P^T P = I"``).
    """
    return "$" in text or ("\\" not in text and bool(_WORD.search(text)))


def _math(expr, display="block") -> Markup:
    return Markup(to_mathml(expr, display=display))


def _latex_math(text: str, display="block") -> Markup:
    """MathML for a LaTeX string; its source in ``<code>`` if the converter cannot read it."""
    try:
        return Markup(latex_to_mathml(text, display=display))
    except Exception:  # the converter raises its own assorted errors on malformed input
        return Markup("<code class=\"latex\">") + escape(text) + Markup("</code>")


def _prose(text: str, claim_ids=frozenset()) -> Markup:
    out = Markup("")
    for kind, piece in split_prose(str(text)):
        out += _latex_math(piece, "inline") if kind == "math" else _linked(piece, claim_ids)
    return out


def _linked(text: str, claim_ids) -> Markup:
    """Plain text with every claim ID of the page as a link to that claim."""
    out, last = Markup(""), 0
    for match in CLAIM_ID.finditer(text):
        if match.group(0) in claim_ids:
            out += typeset_text(text[last:match.start()])
            out += Markup('<a href="#{0}"><code>{0}</code></a>').format(match.group(0))
            last = match.end()
    return out + typeset_text(text[last:])


def _statement(value, display="block") -> Markup:
    """A claim's statement or assumption: a SymPy object, a LaTeX formula, or prose."""
    if not isinstance(value, str):
        return _math(value, display)
    if statement_is_prose(value):
        return _prose(value)
    return _latex_math(value, display)


def _witness(pairs) -> Markup:
    """``a = 1, b = pi/2`` as inline MathML; a computed check's named values (``model id: 1``) as text."""
    out = []
    for name, value in pairs:
        if isinstance(name, str) or isinstance(value, str):
            out.append(escape(f"{name} = ") + Markup("<code>") + escape(repr(value) if isinstance(value, str) else
                                                                        str(value)) + Markup("</code>"))
        else:
            out.append(Markup(mathml_relation(name, "=", value, display="inline")))
    return Markup(", ").join(out)


def _objects(cx) -> Markup:
    """A counterexample's objects, equal ones in one chain (``W_Q = W_K = I``), then a check's named values."""
    out = [Markup(_wrap_math("<mrow>" + "<mo>=</mo>".join(_mathml_inner(x) for x in (*names, value)) + "</mrow>",
                             "inline")) for names, value in cx.objects]
    if cx.named:
        out.append(_witness(cx.named))
    return Markup(", ").join(out)


def _number(value) -> Markup:
    """An exact value at a witness, inline; a negative rational with a true minus sign (the printer's
    ``<mn>-1</mn>`` would show a hyphen)."""
    if isinstance(value, sp.Rational) and value < 0:
        return Markup(_wrap_math(f"<mrow><mo>\u2212</mo>{_mathml_inner(-value)}</mrow>", "inline"))
    return _math(value, "inline")


_SUPERSCRIPTS = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


class HtmlTextPrinter(TextPrinter):
    """The engine's plain text for the page: Unicode signs, ``1.6345 × 10⁻⁷``, everything else escaped."""

    column = 0

    def doprint(self, text) -> Markup:
        return Markup(super().doprint(text))

    def _print_Text(self, piece) -> str:
        return str(escape(piece.text))

    def _print_Script(self, script) -> str:
        italic = lambda text: f"<i>{escape(text)}</i>" if text[0].isalpha() else str(escape(text))  # noqa: E731
        tag = "sub" if script.kind == "_" else "sup"
        return f"{italic(script.base)}<{tag}>{italic(script.script)}</{tag}>"  # names italic, as in math

    def _mantissa(self, number) -> str:
        if not number.exponent:
            return number.mantissa
        # no-break spaces: a number is never split across lines
        return f"{number.mantissa}\u00a0\u00d7\u00a010" + str(int(number.exponent)).translate(_SUPERSCRIPTS)


_TEXT_PRINTER = HtmlTextPrinter()


def typeset_text(text) -> Markup:
    """Plain text of the engine (a detail, a table cell) as the page typesets it."""
    return _TEXT_PRINTER.doprint(text)


def _decimal(text: str) -> Markup:
    """``1.778e−4`` as 1.778 × 10⁻⁴."""
    return typeset_text(text.replace(MINUS, "-"))


_LATEX_RELATION = {"=": "=", "\u2260": r"\ne", "\u2248": r"\approx"}


def _named_relation(shown, symbol) -> Markup:
    """The two sides as the derivation names them: ``F(PX) = P F(X)``."""
    lhs, rhs = shown
    sides = [side for side in (lhs, rhs) if side]
    return _latex_math(f" {_LATEX_RELATION.get(symbol, symbol)} ".join(sides), "inline")


_MATH = re.compile(r"<math\b.*?</math>", re.S)
_HEX_ENTITY = re.compile(r"&#x0*([0-9A-Fa-f]+);|&#([0-9]+);|&(thinsp|times|middot|nbsp);")
_NAMED = {"thinsp": 0x2009, "times": 0xD7, "middot": 0xB7, "nbsp": 0xA0}
_KEPT_ENTITIES = {ord("<"), ord(">"), ord("&"), ord('"')}
_BETWEEN_LINES = re.compile(r"\n[ \t\n]+")
# elements that lay out their children as one row, exactly as an <mrow> around them would
_ROW_LIKE = frozenset({"math", "mrow", "mtd", "msqrt", "mstyle", "mpadded", "mphantom"})
# a script or fraction whose first child is an operator, and a row-like element whose only child is one, are
# operators themselves (MathML Core "embellished operators"): their form and stretch depend on their siblings
_SCRIPTED = frozenset({"msub", "msup", "msubsup", "munder", "mover", "munderover", "mfrac"})


def _is_operator(node) -> bool:
    if node.tag == "mo":
        return True
    if node.tag in _SCRIPTED:
        return len(node) > 0 and _is_operator(node[0])
    if node.tag in _ROW_LIKE - {"math", "mtd", "msqrt"}:
        shown = [child for child in node if child.tag not in ("mspace", "mtext")]
        return len(shown) == 1 and _is_operator(shown[0])
    return False


# infix operators that never stretch (MathML Core operator dictionary; U+2061 function application is one): inside a row their spacing depends
# only on their form, and an operator neither first nor last in its row is infix wherever that row sits
_INFIX = frozenset("+-\u2212=\u2260\u2248<>\u2264\u2265,\u22c5\u00b7\u00d7\u00b1\u2061")


def _splices(row) -> bool:
    """Whether the children of ``row`` lay out the same standing in the row around it."""
    operators = [child for child in row if _is_operator(child)]
    if not operators:
        return True
    # an explicit space (the thin space after U+2061) is the same in every form
    return not (_is_operator(row[0]) or _is_operator(row[-1])) and all(
        child.tag == "mo" and not set(child.attrib) - {"lspace", "rspace"} and child.text in _INFIX
        for child in operators)


def _plain_row(node) -> bool:
    return node.tag == "mrow" and not node.attrib and not (node.text or "").strip() and all(
        not (child.tail or "").strip() for child in node)


def _spliced(node) -> list:
    """The children ``node`` shows, with every row that changes nothing about the layout removed.

    A row around one element is that element; a row that is the only child of a row-like parent is the
    parent's own row; a row inside a row-like parent whose children include no operator lays out the same
    once its children stand in the parent (an operator's prefix/infix/postfix form and stretch size depend
    on its siblings, so only rows whose operators are non-stretching infix ones between operands go)."""
    children = list(node)
    for child in children:
        _spliced(child)
    if node.get("class") == "b":  # a breakable row: each child is one item (a line starts only between them)
        return children
    out = []
    for child in children:
        if _plain_row(child):
            if len(child) == 1:
                child[0].tail = child.tail
                out.append(child[0])
                continue
            if node.tag in _ROW_LIKE and len(child) > 0 and (len(children) == 1 or _splices(child)):
                child[-1].tail = child.tail
                out.extend(child)
                continue
        out.append(child)
    node[:] = out
    return out


def _serialized(node) -> str:
    attributes = "".join(f' {name}="{escape(value)}"' for name, value in node.attrib.items())
    text = str(escape(node.text or ""))
    inner = text + "".join(_serialized(child) + str(escape(child.tail or "")) for child in node)
    if node.tag == "mspace" and not inner:
        return f"<mspace{attributes}/>"
    return f"<{node.tag}{attributes}>{inner}</{node.tag}>"


def _upright_letter(node) -> bool:
    return (node.tag == "mi" and node.attrib == {"mathvariant": "normal"} and len(node) == 0
            and len(node.text or "") == 1 and not (node.tail or "").strip())


_SCRIPTED = ("msub", "msup", "msubsup")


def _merge_upright_words(parent) -> None:
    """``\\mathrm{softmax}`` arrives as one upright ``<mi>`` per letter; a run of them is one ``<mi>`` of the
    word, and an ``<mi>`` of two or more characters is upright by default (MathML Core transforms only a
    single-character ``<mi>`` to italic), so the word needs no ``mathvariant``."""
    out, run = [], []
    for child in list(parent) + [None]:
        if child is not None and _upright_letter(child):
            run.append(child)
            continue
        if run and child is not None and child.tag in _SCRIPTED and len(child) and _upright_letter(child[0]):
            # ``\mathrm{softmax}_{rows}``: the script arrives on the word's last letter; it belongs to the word
            child[0].text = "".join(letter.text for letter in run) + child[0].text
            del child[0].attrib["mathvariant"]
            run = []
        if len(run) > 1:
            run[0].text = "".join(letter.text for letter in run)
            run[0].tail = run[-1].tail
        out.extend(run[:1])
        run = []
        if child is not None:
            out.append(child)
    parent[:] = out
    for child in parent:
        if child.tag == "mi" and child.get("mathvariant") == "normal" and len(child.text or "") > 1:
            del child.attrib["mathvariant"]


# a fence's attributes that say what its place in the row says already: the first element of a row of two or
# more is prefix, the last postfix, and the operator dictionary makes these fences stretchy in those forms
_DEFAULT_FENCE = {"(": "prefix", "[": "prefix", "{": "prefix", ")": "postfix", "]": "postfix", "}": "postfix"}


def _drop_default_fence_attributes(row) -> None:
    if row.tag not in _ROW_LIKE or len(row) < 2:
        return
    for fence, form in ((row[0], "prefix"), (row[-1], "postfix")):
        if (fence.tag == "mo" and _DEFAULT_FENCE.get(fence.text) == form and fence.attrib
                and set(fence.attrib.items()) <= {("stretchy", "true"), ("form", form)}):
            fence.attrib.clear()


def compact_mathml(math: str) -> str:
    """One ``<math>`` element in fewer bytes, laid out the same by a MathML Core browser: no namespace
    (HTML gives it), no ``display="inline"`` (the default), no invisible times (it only tells a screen
    reader "times"; MathML Core lays out juxtaposition alike), no ``fence`` (it has no effect on layout),
    no stretch or form a fence has by its place, an upright word as one ``<mi>``, and no row that changes
    nothing."""
    math = math.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")
    root = ElementTree.fromstring(math)
    if root.get("display") == "inline":
        del root.attrib["display"]
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == "mo" and child.text == "\u2062" and not child.attrib and not (child.tail or "").strip():
                parent.remove(child)
            child.attrib.pop("fence", None)
        _merge_upright_words(parent)
    for node in root.iter():
        if node.tag == "mo" and node.attrib == {"stretchy": "false"} and node.text in _PLAIN_FENCES and len(node) == 0:
            # a fence that does not stretch is its glyph and nothing else: as text it is laid out alike (its
            # dictionary spacing is zero in every form) in 11 fewer bytes, and a row around it may go
            node.tag = "mtext"
            node.attrib.clear()
    _spliced(root)
    for row in root.iter():
        _drop_default_fence_attributes(row)
        _merge_texts(row)
    return _serialized(root)


def _merge_texts(row) -> None:
    """Neighbouring ``<mtext>`` in a row (``)(`` between two factors) are one run of text: a row lays its
    children side by side, and text is set side by side (kerning apart) too."""
    if row.tag not in _ROW_LIKE or row.get("class") == "b":
        return
    out = []
    for child in list(row):
        if (out and child.tag == "mtext" and out[-1].tag == "mtext" and not child.attrib and not out[-1].attrib
                and len(child) == 0 and len(out[-1]) == 0 and not (out[-1].tail or "").strip()):
            out[-1].text = (out[-1].text or "") + (child.text or "")
            out[-1].tail = child.tail
            continue
        out.append(child)
    row[:] = out


_PLAIN_FENCES = frozenset("()[]{}")


def compact_html(page: str) -> str:
    """The same page in fewer bytes: every formula through :func:`compact_mathml`, characters without
    numeric entities (the page is UTF-8), quotes in text as themselves, and no indentation between lines
    (outside ``<pre>``, a run of white space containing a line break shows as one space, whatever its length)."""
    page = _STYLE.sub(lambda match: match.group(1) + _minified_css(match.group(2)) + match.group(3), page)
    pieces = re.split(r"(<pre\b.*?</pre>)", page, flags=re.S)
    page = "".join(piece if piece.startswith("<pre") else _AFTER_BLOCK.sub(r"\1", _BETWEEN_LINES.sub("\n", piece))
                   for piece in pieces)
    page = _MATH.sub(lambda match: compact_mathml(match.group(0)), page)

    def literal(match):
        if match.group(3):
            return chr(_NAMED[match.group(3)])
        code = int(match.group(1), 16) if match.group(1) else int(match.group(2))
        return match.group(0) if code in _KEPT_ENTITIES or code < 32 else chr(code)

    page = _HEX_ENTITY.sub(literal, page)
    # a quote needs its reference only inside an attribute value: in text (between a tag's ">" and the
    # next "<"; an escaped attribute value holds no ">") it is written as itself
    return _TEXT.sub(lambda match: match.group(0).replace("&#34;", '"').replace("&#39;", "'"), page)


_TEXT = re.compile(r">[^<>]*<")
_STYLE = re.compile(r"(<style>)(.*?)(</style>)", re.S)
# a line break right after a block element's end tag and before the next tag is never shown: white space
# at the start of a line collapses away (outside <pre>, which is left as it is)
_AFTER_BLOCK = re.compile(r"(</(?:div|dd|dt|dl|li|ul|p|header|article|section|figure|figcaption|nav|table|thead|tbody"
                          r"|tr|caption|h[1-6])>)\n(?=<)")


def _minified_css(css: str) -> str:
    """The stylesheet without its comments (they explain the template, not the page) and without the
    white space around punctuation; never around ``:`` before a name, where a space is a combinator."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"\s+", " ", css)
    return re.sub(r"\s*([{};,>])\s*", r"\1", css).replace(": ", ":").strip()


#: TeX a figure caption uses, as the characters a screen reader (or a broken image) should show
_TEX_WORDS = {"omega": "\u03c9", "beta": "\u03b2", "theta": "\u03b8", "pi": "\u03c0", "alpha": "\u03b1",
              "partial": "\u2202", "dots": "\u2026", "ldots": "\u2026", "cdots": "\u22ef", "sum": "\u03a3",
              "times": "\u00d7", "approx": "\u2248", "le": "\u2264", "ge": "\u2265", "ne": "\u2260"}


def alt_text(caption: str) -> str:
    """A caption's TeX as plain text for ``alt``: ``\\partial s/\\partial\\omega`` reads ``∂s/∂ω``."""
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", caption.replace("$", ""))
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX_WORDS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"\\[,;:! ]", " ", text).replace("^T", "\u1d40").replace("{", "").replace("}", "")
    return re.sub(r" {2,}", " ", text)


def _calculation_line(line) -> Markup:
    """A worked calculation's line: how the reader writes the quantity, its exact value (printed by the
    MathML printer) or the value it is proved equal to, and the chapter's digits after ``≈``; each piece its
    own formula, so that a narrow screen breaks the line between them (and a value too wide for a phone is
    displayed as a formula that breaks)."""
    pieces = [_latex_math(form + " =", "inline") for form in line.shown]
    if line.before is not None:
        shown = to_mathml(line.before, display="block")
        pieces.append(Markup(shown) if 'class="b"' in shown else _math(line.before, "inline"))
    elif line.label:
        pieces.append(_latex_math(line.label, "inline"))
    if line.text:
        pieces.append(_latex_math(f"{line.relation} {line.text}", "inline"))
    return Markup(" ").join(pieces)


def _given(pieces) -> Markup:
    """A calculation's data, one formula each (``q = (1, 2)^T``, ``ω = 1``...), separated by commas."""
    return Markup(", ").join(_latex_math(piece, "inline") for piece in pieces)


def render_html(document) -> str:
    env = environment("html")
    claim_ids = frozenset(c.id for c in document.claims)
    env.filters.update(alt=alt_text, math=_math, statement=_statement, prose=lambda text: _prose(text, claim_ids), witness=_witness,
                       objects=_objects, decimal=_decimal, text=typeset_text, tactic=tactic_phrase, number=_number, inline=lambda expr: _math(expr, "inline"), latex_math=_latex_math)
    env.globals["relation"] = lambda lhs, symbol, rhs: Markup(mathml_relation(lhs, symbol, rhs))
    env.globals["relation_inline"] = lambda lhs, symbol, rhs: Markup(
        mathml_relation(lhs, symbol, rhs, display="inline"))
    env.globals["named_relation"] = _named_relation
    env.globals["calculation_line"] = _calculation_line
    env.filters["given"] = _given
    env.tests["prose_statement"] = lambda value: isinstance(value, str) and statement_is_prose(value)
    return compact_html(env.get_template("report.html.j2").render(doc=document))
