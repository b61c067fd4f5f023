"""Text that holds mathematics, printed as a textbook prints it: LaTeX read into MathML, plain text
with ASCII formulas (``R(m)^T R(n) = R(n - m)``) split into words and typeset formulas, claim ids linked.

The claims' statements and the engine's reasons are written by people in LaTeX or plain text; the
printers of :mod:`._printers` print SymPy expressions.  This module turns the former into the same
MathML and LaTeX the latter produce, element by element, so that a statement and the formula it
names look alike on the page.
"""

from __future__ import annotations

import functools
import re
from xml.dom import minidom

__all__ = ["latex_to_mathml", "split_prose", "split_latex", "latex_pieces", "ascii_math_to_latex", "CLAIM_ID", "text_with_math_to_mathml"]


from ._breaking import LINE_EM, _em_of_mathml, _infix_lead
from ._printers import FUNCTION_APPLICATION, FUNCTION_SPACE


def latex_to_mathml(latex: str, *, display: str = "block") -> str:
    """MathML for a LaTeX math string written by hand (a claim's statement).

    latex2mathml's output is finished by :func:`_finish_converted`, so a statement prints as the
    printer's own formulas do.  A display formula wider than :data:`LINE_EM` is a breakable row of
    the pieces :func:`split_latex` finds."""
    from latex2mathml.converter import convert

    whole = _finish_converted(convert(latex, display=display))
    if display != "block":
        return whole
    if _em_of_mathml(_MATH_ELEMENT.sub("", whole)) <= LINE_EM:
        return whole
    chunks = latex_pieces(latex)
    if len(chunks) < 2:
        return whole
    rows = []
    for chunk in chunks:
        try:
            converted = _finish_converted(convert(chunk, display="inline"))
        except Exception:  # a piece the converter cannot read alone: the formula stays one line
            return whole
        inner = _MATH_ELEMENT.sub("", converted)
        if inner.startswith("<mrow>") and inner.endswith("</mrow>"):  # the converter's own row around it all
            inner = inner[len("<mrow>"):-len("</mrow>")]
        rows.append("<mrow>" + _infix_lead(len(rows), inner) + "</mrow>")
    start = whole[:whole.index(">")]
    return start + ' class="b">' + "".join(rows) + "</math>"


_MATH_ELEMENT = re.compile(r"</?math[^>]*>")
_LATEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)
#: relations a statement may break after, and spacing or punctuation that ends a piece
_LATEX_RELATIONS = frozenset(r"= < > \ne \neq \le \leq \ge \geq \approx \equiv \Rightarrow \Leftrightarrow \iff "
                             r"\implies \to \mapsto \sim".split())
_LATEX_SEPARATORS = frozenset([";", ",", r"\quad", r"\qquad"])
_LATEX_SPACES = frozenset([r"\ ", r"\;", r"\,", r"\:", r"\!", r"\quad", r"\qquad"])


def latex_pieces(latex: str) -> list:
    """:func:`split_latex`, and a piece still wider than :data:`LINE_EM` split again inside its
    outer ``\\left(...\\right)`` (which become plain parentheses, the only kind a line can break)."""
    pieces = []
    for piece in split_latex(latex):
        if r"\left" in piece and _latex_em(piece) > LINE_EM:
            plain = _SIZED_FENCE.sub(lambda match: match.group(1), piece)
            pieces.extend(split_latex(plain, inside=1))
        else:
            pieces.append(piece)
    return pieces


_SIZED_FENCE = re.compile(r"\\(?:left|right)\s*([()\[\]]|\\[{}|])")


def _latex_em(latex: str) -> float:
    from latex2mathml.converter import convert

    try:
        return _em_of_mathml(_MATH_ELEMENT.sub("", convert(latex)))
    except Exception:  # the converter's own assorted errors: a piece it cannot read is not split
        return 0.0


def split_latex(latex: str, *, inside: int = 0) -> list:
    """A hand-written formula cut where a line may break, at its top level (outside braces,
    parentheses and ``\\left...\\right``): before a binary + or -, after a relation, after
    ``;``, ``,`` and ``\\quad`` (never around ``\\text{...}``, whose spaces a line's end would
    drop); ``inside=1`` also inside one level of parentheses.  Joining the pieces gives ``latex`` back."""
    tokens = _LATEX_TOKEN.findall(latex)
    pieces, current, depth, k = [], "", 0, 0
    previous = None  # the last token that is not white space
    while k < len(tokens):
        token = tokens[k]
        if token in ("{", r"\left") or token in ("(", "[") and previous != r"\left":
            depth += 1
        elif token in ("}", r"\right") or token in (")", "]") and previous != r"\right":
            depth = max(depth - 1, 0)
        binary = token in ("+", "-") and previous is not None and previous not in _LATEX_RELATIONS \
            and previous not in ("(", "[", "{", "^", "_", ",", ";") and previous not in _LATEX_SPACES
        if depth <= inside and binary and current.strip():
            pieces.append(current)
            current = ""
        current += token
        if not token.isspace():
            previous = token
        if depth <= inside and (token in _LATEX_RELATIONS or token in _LATEX_SEPARATORS):
            while k + 1 < len(tokens) and (tokens[k + 1].isspace() or tokens[k + 1] in _LATEX_SPACES):
                k += 1
                current += tokens[k]
            pieces.append(current)
            current = ""
        k += 1
    if current.strip():
        pieces.append(current)
    elif current and pieces:
        pieces[-1] += current
    return pieces


#: the function names latex2mathml sets as an ``<mi>`` without the function application operator
_FUNCTION_NAMES = frozenset("sin cos tan cot sec csc sinh cosh tanh exp log ln arcsin arccos arctan".split())
_SCRIPTS = ("msub", "msup", "msubsup")
_OPENING = {")": "(", "]": "[", "}": "{"}
_ROWS = ("math", "mrow", "mtd", "msqrt", "mstyle", "mpadded", "mphantom")


def _finish_converted(mathml: str) -> str:
    """latex2mathml's MathML with what TeX does by itself and MathML must say (:func:`_apply_functions`,
    :func:`_script_whole_groups`)."""
    root = minidom.parseString(mathml).documentElement
    _apply_functions(root)
    _script_whole_groups(root)
    return root.toxml().encode("ascii", "xmlcharrefreplace").decode()


def _element_children(node):
    return [child for child in node.childNodes if child.nodeType == child.ELEMENT_NODE]


def _text(node) -> str:
    return "".join(child.data if child.nodeType == child.TEXT_NODE else _text(child) for child in node.childNodes)


def _apply_functions(root) -> None:
    """U+2061 after each function name, after its scripts (``sin²θ`` is ``<msup>sin 2</msup>⁡θ``: an
    operator inside the ``<msup>`` would be a third child), followed by TeX's thin space unless the
    argument opens with a parenthesis."""
    for name in root.getElementsByTagName("mi"):
        if _text(name) not in _FUNCTION_NAMES:
            continue
        head, parent = name, name.parentNode
        if parent.tagName in _SCRIPTS + ("munder", "mover") and _element_children(parent)[0] is name:
            head, parent = parent, parent.parentNode
        after = head.nextSibling
        if getattr(after, "tagName", None) == "mo" and _text(after) == FUNCTION_APPLICATION:
            application = after
        else:
            application = root.ownerDocument.createElement("mo")
            application.appendChild(root.ownerDocument.createTextNode(FUNCTION_APPLICATION))
            parent.insertBefore(application, after)
        argument = application.nextSibling
        if argument is not None and not _opens_with_fence(argument):
            application.setAttribute("rspace", FUNCTION_SPACE)


def _opens_with_fence(node) -> bool:
    while getattr(node, "tagName", None) in ("mrow",) + _SCRIPTS:
        children = _element_children(node)
        if not children:
            return False
        node = children[0]
    return getattr(node, "tagName", None) == "mo" and _text(node) in ("(", "[", "{", "|", "\u2016", "\u27e8")


def _script_whole_groups(root) -> None:
    """A script written after a closing parenthesis (``R(\\theta)^T``, ``(P^T P)_{ij}``), which TeX sets on
    the parenthesis, on the whole parenthesized group: latex2mathml makes the lone ``)`` the base."""
    for script in list(root.getElementsByTagName("msup") + root.getElementsByTagName("msub")
                       + root.getElementsByTagName("msubsup")):
        base = _element_children(script)[0]
        # the group is gathered from the row around the script (an element of fixed arity has none)
        if base.tagName != "mo" or _text(base) not in _OPENING or script.parentNode.tagName not in _ROWS:
            continue
        siblings = _element_children(script.parentNode)
        depth, start = 0, None
        for k in range(siblings.index(script) - 1, -1, -1):
            text = _text(siblings[k]) if siblings[k].tagName == "mo" else ""
            if text in _OPENING:
                depth += 1
            elif text in _OPENING.values():
                if depth == 0:
                    start = k
                    break
                depth -= 1
        if start is None:  # a group opened in another piece of a broken line: its part on this line
            start = 1 if siblings[0].tagName == "mo" and siblings[0] is not script else 0
        if start == siblings.index(script):
            continue
        group = root.ownerDocument.createElement("mrow")
        script.replaceChild(group, base)
        for sibling in siblings[start:siblings.index(script)]:
            group.appendChild(sibling)
        group.appendChild(base)


_INLINE_MATH = re.compile(r"\$([^$]+)\$")


def split_prose(text: str):
    """Split prose into ``[("text", s) | ("math", latex)]`` pieces.

    ``$...$`` is math as written; outside it, the ASCII math a derivation's notes and step
    labels use (``P^T P = I``, ``omega_r``, ``sqrt(d)``, ``p_(t+1)``) is recognised and turned
    into LaTeX (:func:`ascii_math_to_latex`), so that no formula reaches the reader as ASCII.
    """
    text = _without_python(text)
    pieces, last = [], 0
    for match in _INLINE_MATH.finditer(text):
        if match.start() > last:
            pieces.extend(_ascii_math_pieces(text[last:match.start()]))
        pieces.append(("math", match.group(1)))
        last = match.end()
    if last < len(text):
        pieces.extend(_ascii_math_pieces(text[last:]))
    return pieces


#: Python notation that derivations' labels use, as a textbook writes it (applied outside $...$)
_PYTHON_NOTATION = (
    (re.compile(r"\s*==\s*"), " = "),                       # a comparison reads as an equation
    (re.compile(r"\b(\d+)x(\d+)\b"), r"$\1\\times\2$"),  # 2x2 -> 2 x 2 (doubled: a replacement reads \t as a tab)
    (re.compile(r"\*\*"), "^"),                              # 2**53 -> 2^53
    (re.compile(r"(?<![\w.])([a-z])(\d)\b"), r"\1_\2"),     # z1 -> z_1 (not inside words or IDs)
)


def _without_python(text: str) -> str:
    """``text`` with :data:`_PYTHON_NOTATION` rewritten outside its ``$...$`` math."""
    parts = re.split(r"(\$[^$]+\$)", text)
    for k in range(0, len(parts), 2):
        for pattern, replacement in _PYTHON_NOTATION:
            parts[k] = pattern.sub(replacement, parts[k])
    return "".join(parts)


_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon "
          "phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega").split()
_FUNCTIONS = ("sin", "cos", "tan", "log", "exp", "sqrt", "max", "min", "softmax", "argmax", "diag", "blockdiag")
_MATH_CHARS = re.compile(r"[A-Za-z0-9_^(){}\[\]+\-*/=<>!|.,'~]+")
_RELATIONS = {"=", "!=", "<", ">", "<=", ">=", "->", "~"}
_OPERATORS = _RELATIONS | {"+", "-", "*", "/"}
_LETTERS = re.compile(r"[A-Za-z]+")
_CALL = re.compile(r"(?:" + "|".join(_FUNCTIONS) + r")\(.*\)[.,;:]?")


#: a claim ID in prose (``rope.relative``): a name to link, never a formula
CLAIM_ID = re.compile(r"\b[a-z]+\.[a-z][a-z0-9_]*\b")


def _word_class(word: str) -> str:
    """``"seed"`` (surely math), ``"atom"`` (math next to math) or ``"word"``."""
    if CLAIM_ID.search(word):
        return "word"
    if word.endswith(":") and not re.search(r"[_^]|[=<>]", word) and not any(
            run in _GREEK for run in _LETTERS.findall(word)) and not re.fullmatch(r"\d+[A-Za-z]?:", word):
        return "word"  # a label ("L1:", "note:"), not a formula
    core = word.rstrip(".,;:")
    if not core or not _MATH_CHARS.fullmatch(core):
        return "word"
    if core in _OPERATORS:
        return "op"
    if _CALL.fullmatch(core) or "||" in core:
        return "seed"
    letters = _LETTERS.findall(core)
    named = all(run in _GREEK or run in _FUNCTIONS or len(run) == 1 for run in letters)
    if "_" in core or "^" in core:
        return "seed" if core[0].isalnum() or core[0] in "(|" else "word"
    if any(run in _GREEK for run in letters) and named:
        return "seed"
    if core in ("a", "A.", "I."):
        return "word"
    if not letters:
        return "atom" if any(ch.isdigit() for ch in core) or core in ("(", ")") else "word"
    if named and all(len(run) == 1 for run in letters) and len(core) <= 12:
        return "atom"
    if named and any(run in _FUNCTIONS for run in letters):
        return "seed"
    return "word"


@functools.lru_cache(maxsize=4096)
def _converts(latex: str) -> bool:
    """Whether recognised ASCII math is well-formed (else it stays text: a guess never breaks a page)."""
    try:
        latex_to_mathml(latex)
    except Exception:  # the converter raises its own assorted errors on what it cannot read
        return False
    return True


def _balanced(text: str) -> bool:
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    for ch in text:
        if ch in depth:
            depth[ch] += 1
        elif ch in closing:
            depth[closing[ch]] -= 1
            if depth[closing[ch]] < 0:
                return False
    return all(v == 0 for v in depth.values())


def _ascii_math_pieces(text: str):
    words = re.split(r"(\s+)", text)
    tokens = [(w, _word_class(w) if w and not w.isspace() else "space") for w in words]
    pieces, k = [], 0
    while k < len(tokens):
        word, kind = tokens[k]
        if kind in ("seed", "atom", "op"):
            end = k
            scan = k
            while scan < len(tokens):
                w, c = tokens[scan]
                if c in ("seed", "atom", "op"):
                    end = scan
                    if (w.endswith((".", ";")) and not w.endswith("..") and scan > k) or w.endswith(":"):
                        break
                elif c != "space":
                    break
                scan += 1
            while end > k and tokens[end][1] in ("op", "space"):
                end -= 1  # a relation with nothing after it ("relayout_pairing = adjacent") ends the formula
            run = [w for w, _ in tokens[k:end + 1]]
            classes = [c for _, c in tokens[k:end + 1] if c != "space"]
            while run and tokens[k][1] == "op" and tokens[k][0] not in ("(",):
                pieces.append(("text", tokens[k][0]))
                k += 1
                run = run[1:]
                classes = classes[1:]
            if not run:
                continue
            useful = "seed" in classes or (
                any(c == "op" for c in classes) and sum(c != "op" for c in classes) >= 2)
            if run and useful:
                joined = "".join(run)
                trail = ""
                while joined and joined[-1] in ".,;:" and not joined.endswith(".."):
                    trail = joined[-1] + trail
                    joined = joined[:-1]
                lead = ""
                if not _balanced(joined) and joined.startswith("("):
                    lead, joined = "(", joined[1:]
                if not _balanced(joined) and joined.endswith(")"):
                    trail, joined = ")" + trail, joined[:-1]
                latex = ascii_math_to_latex(joined) if _balanced(joined) and joined else None
                if latex is not None and _converts(latex):
                    if lead:
                        pieces.append(("text", lead))
                    pieces.append(("math", latex))
                    if trail:
                        pieces.append(("text", trail))
                    k = end + 1
                    continue
            # the token at k (leading operators may have been passed over above), never ``word`` again
            pieces.append(("text", tokens[k][0]))
            k += 1
            continue
        pieces.append(("text", word))
        k += 1
    merged = []
    for kind, piece in pieces:
        if merged and kind == "text" and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + piece)
        else:
            merged.append((kind, piece))
    return merged


def _group(body: str) -> str:
    return "{" + ascii_math_to_latex(body) + "}"


def ascii_math_to_latex(text: str) -> str:
    """``P^T P = I``, ``omega_r``, ``sqrt(d)``, ``p_(t+1)``, ``||p_t||^2`` as LaTeX."""
    out = re.sub(r"([A-Za-z])('+)", r"{\1\2}", text.replace("_*", "_{*}"))
    out = re.sub(r"\|\|(.+?)\|\|", lambda m: "\x00norm" + m.group(1) + "\x00norm", out)
    out = re.sub(r"sqrt\(([^()]*(?:\([^()]*\)[^()]*)*)\)", lambda m: "\x00sqrt{" + m.group(1) + "}", out)
    out = re.sub(r"([_^])\(([^()]*(?:\([^()]*\)[^()]*)*)\)", lambda m: m.group(1) + "{" + m.group(2) + "}", out)
    out = re.sub(r"\^(-?[A-Za-z0-9]+)", lambda m: "^{" + m.group(1) + "}", out)
    out = re.sub(r"_([A-Za-z0-9]+)", lambda m: "_{" + m.group(1) + "}", out)
    out = re.sub(r"([A-Za-z])~", "\x00tilde{\\1}", out)
    parts = re.split(r"([_^]\{[^{}]*\})", out)
    for k, part in enumerate(parts):
        if k % 2:  # a subscript or superscript: its letters are indices, only Greek names change
            parts[k] = re.sub(r"[A-Za-z]+", lambda m: "\\" + m.group(0) + " " if m.group(0) in _GREEK
                              else m.group(0), part)
        else:
            parts[k] = re.sub(r"(?<![\\A-Za-z\x00])[A-Za-z]+", _latex_name, part)
    out = "".join(parts)
    for ascii_op, tex in (("!=", r" \ne "), ("<=", r" \le "), (">=", r" \ge "), ("->", r" \to "),
                          ("{*}", r"{\ast}"), ("*", r" \cdot ")):
        out = out.replace(ascii_op, tex)
    out = out.replace("\x00norm", r"\|").replace("\x00sqrt", r"\sqrt").replace("\x00tilde", r"\tilde")
    return re.sub(r" +", " ", out).strip().replace(" }", "}").replace(" _", "_").replace(" ^", "^")


def _latex_name(match) -> str:
    word = match.group(0)
    if word in _GREEK or word in ("sin", "cos", "tan", "log", "exp", "max", "min"):
        return "\\" + word + " "
    if word in ("sum", "prod"):
        return "\\" + word + " "
    if len(word) == 1:
        return word
    return r"\mathrm{" + word + "}"


def text_with_math_to_mathml(text: str):
    """:func:`split_prose` with each math piece as inline MathML."""
    return [(kind, latex_to_mathml(piece, display="inline") if kind == "math" else piece)
            for kind, piece in split_prose(text)]


# -- line breaking ------------------------------------------------------------------------------------
#
# MathML Core has no automatic line breaking, and a page is read at 1280 px and at 390 px, so the breaks
# cannot be fixed for one width.  A display formula wider than LINE_EM is printed instead as a row of
# *items* (``<math class="b">``) that the page's stylesheet lays out as a wrapping flex box: each item is
# an ordinary MathML row, and the browser starts a new (indented) line before any item that does not fit.
# An item starts with the binary operator before its term (the break is before a top-level + or −) or
# ends with a relation (the break is after = or ≤); a term still wider than LINE_EM is split in turn,
# between its factors and inside its parentheses, so no unbreakable piece is much wider than a phone.
# The LaTeX printer writes the same items separated by ``\symbreak``, which the document's \fitmath turns
# into the only places a too-wide formula may break: both formats break at the same places.

#: a display formula (or a term of one) estimated wider than this many em is split into items; a
#: phone's column is about 17.4 em of math at the page's size, less the 1 em that indents a continued
#: line, and the estimate is within 10% for nine formulas in ten
