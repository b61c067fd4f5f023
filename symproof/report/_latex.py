"""The report as a LaTeX document (amsmath), and its compilation with pdflatex.

Math comes from :class:`~symproof.report._printers.ReportLatexPrinter`; prose
is escaped here, including the Unicode a derivation's notes may use, so that
pdflatex of a plain TeX Live (latex-base, latex-recommended,
fonts-recommended) compiles the file without errors.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from .._ground._errors import SymproofError
from ._html import statement_is_prose
from ._formulas import latex_relation, to_latex
from ._prose import latex_pieces, split_prose
from ._templates import environment
from ._typeset import TextPrinter, tactic_phrase
from ._formulas import _latex_inner# how a witness box prints its objects

__all__ = ["render_latex", "compile_pdf", "escape_tex", "find_pdflatex", "MAX_PDFLATEX_PASSES", "PdfBuild"]

#: pdflatex runs until its .aux and .toc stop changing (the contents' page numbers settle only
#: once the contents' own length is known); a document that never settles is an error
MAX_PDFLATEX_PASSES = 5

_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    "-": "-{}",  # so that "--option" is not set as an en dash
}
_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
          "varsigma sigma tau upsilon phi chi psi omega").split()
_UNICODE = {chr(0x3B1 + k): rf"\ensuremath{{\{name}}}" for k, name in enumerate(_GREEK) if name != "omicron"}
_UNICODE.update({chr(0x391 + k): rf"\ensuremath{{\{name.capitalize()}}}" for k, name in enumerate(_GREEK)
                 if name.capitalize() in ("Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi",
                                          "Psi", "Omega")})
_UNICODE.update({
    "\u03bf": "o", "\u2212": r"\ensuremath{-}", "\u00d7": r"\ensuremath{\times}", "\u00b7": r"\ensuremath{\cdot}",
    "\u2260": r"\ensuremath{\ne}", "\u2248": r"\ensuremath{\approx}", "\u2264": r"\ensuremath{\le}",
    "\u2265": r"\ensuremath{\ge}", "\u2192": r"\ensuremath{\to}", "\u2190": r"\ensuremath{\leftarrow}",
    "\u21d2": r"\ensuremath{\Rightarrow}", "\u221e": r"\ensuremath{\infty}", "\u221a": r"\ensuremath{\surd}",
    "\u2211": r"\ensuremath{\sum}", "\u2016": r"\ensuremath{\|}", "\u2208": r"\ensuremath{\in}",
    "\u00b1": r"\ensuremath{\pm}", "\u2026": r"\ldots{}", "\u22ef": r"\ensuremath{\cdots}",
    "\u2013": "--", "\u2014": "---", "\u2018": "`", "\u2019": "'", "\u201c": "``", "\u201d": "''",
    "\u00a0": "~", "\u2713": r"\ensuremath{\checkmark}", "\u2717": r"\ensuremath{\times}",
    # powers of two as symproof prints allowances (2⁻⁴¹)
    "\u207b": r"\textsuperscript{\ensuremath{-}}",
    **{chr(c): rf"\textsuperscript{{{d}}}" for d, c in zip("0123456789", (0x2070, 0xB9, 0xB2, 0xB3, *range(0x2074, 0x207A)))},
    "\u00e9": r"\'e", "\u00e8": r"\`e", "\u00fc": r"\"u", "\u00f6": r"\"o", "\u00e4": r"\"a",
})


def escape_tex(text) -> str:
    """Plain text as LaTeX source: specials escaped, known Unicode mapped, the rest named."""
    out = []
    for ch in str(text):
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append(_UNICODE.get(ch, rf"\texttt{{[U+{ord(ch):04X}]}}"))
    return "".join(out)


class TexTextPrinter(TextPrinter):
    """The engine's plain text for the PDF: ``\\geq``, ``1.6345\\times 10^{-7}``, everything else escaped."""

    column = 1

    def _print_Text(self, piece) -> str:
        return escape_tex(piece.text)

    def _print_Script(self, script) -> str:
        return rf"\ensuremath{{{script.base}{script.kind}{{{script.script}}}}}"

    def _mantissa(self, number) -> str:
        if not number.exponent:
            return number.mantissa
        return rf"\ensuremath{{{number.mantissa}\times 10^{{{int(number.exponent)}}}}}"


_TEXT_PRINTER = TexTextPrinter()


def typeset_text(text) -> str:
    """Plain text of the engine (a detail, a table cell) as the PDF typesets it."""
    return _TEXT_PRINTER.doprint(text)


def _prose(text) -> str:
    """Prose with ``$...$`` math: the text typeset, the math kept."""
    return "".join(f"${piece}$" if kind == "math" else typeset_text(piece) for kind, piece in split_prose(str(text)))


def _statement(value) -> str:
    """A statement as LaTeX math (``\\text{}`` around prose)."""
    if not isinstance(value, str):
        return to_latex(value)
    if statement_is_prose(value):
        return r"\text{" + _prose(value) + "}"
    return r" \symbreak ".join(latex_pieces(value))  # where the page's MathML of it may break


def _witness(pairs) -> str:
    """Math-mode text; a computed check's named values (``model id: 1``) as upright text."""
    out = []
    for name, value in pairs:
        if isinstance(name, str) or isinstance(value, str):
            shown = repr(value) if isinstance(value, str) else str(value)
            out.append(r"\text{" + escape_tex(name) + r" = \texttt{" + escape_tex(shown) + "}}")
        else:
            out.append(f"{to_latex(name)} = {to_latex(value)}")
    return r",\ ".join(out)


def _objects(cx) -> str:
    """A counterexample's objects, equal ones in one chain (``W_Q = W_K = I``), then a check's named values."""
    out = ["$" + " = ".join(_latex_inner(x) for x in (*names, value)) + "$" for names, value in cx.objects]
    if cx.named:
        out.append("$" + _witness(cx.named) + "$")
    return ", ".join(out)


def _decimal(text: str) -> str:
    """``1.778e−4`` as ``1.778\\times 10^{-4}``."""
    return typeset_text(text.replace("\u2212", "-"))


_RELATION = {"=": "=", "\u2260": r"\ne", "\u2248": r"\approx"}


def _named_relation(shown, symbol) -> str:
    """The two sides as the derivation names them: ``F(PX) = P F(X)``."""
    return f" {_RELATION.get(symbol, symbol)} ".join(side for side in shown if side)


def _anchor(claim_id: str) -> str:
    return "claim:" + re.sub(r"[^A-Za-z0-9.:-]", "-", claim_id)


def _listing_source(source: str) -> str:
    # listings reads bytes: a non-ASCII character would break the build, so it is named instead
    return "".join(ch if ord(ch) < 128 else f"[U+{ord(ch):04X}]" for ch in source).replace(
        "\\end{lstlisting}", "\\end {lstlisting}")


def _calculation_line(line) -> str:
    """A worked calculation's line as one formula (the page sets the same pieces: :func:`._html._calculation_line`)."""
    pieces = [" = ".join(line.shown)]
    if line.before is not None:
        pieces.append(to_latex(line.before))
    elif line.label:
        pieces.append(line.label)
    out = r" \symbreak = ".join(pieces)
    return out + (rf" \symbreak {line.relation} {line.text}" if line.text else "")


def render_latex(document) -> str:
    env = environment("latex")
    env.filters.update(tex=to_latex, escape=escape_tex, prose=_prose, statement=_statement,
                       witness=_witness, objects=_objects, decimal=_decimal, text=typeset_text, tactic=tactic_phrase, anchor=_anchor, listing=_listing_source)
    env.globals["relation"] = latex_relation
    env.globals["named_relation"] = _named_relation
    env.globals["calculation_line"] = _calculation_line
    env.filters["given"] = lambda pieces: ", ".join(f"${piece}$" for piece in pieces)
    return env.get_template("chapter.tex.j2").render(doc=document)


def find_pdflatex() -> str | None:
    return shutil.which("pdflatex")


@dataclass(frozen=True)
class PdfBuild:
    """The compiled PDF, the last pass's log (overfull boxes, warnings), its table of contents
    (the ``.toc`` file) and how many passes it took."""

    pdf: bytes
    log: str
    passes: int
    toc: str = ""


def compile_pdf(tex: str, files: dict, *, name: str = "chapter", pdflatex: str | None = None) -> bytes:
    """Compile ``tex`` (with ``files``: relative path -> bytes, the figures) in a scratch folder.

    The environment pins ``SOURCE_DATE_EPOCH`` so that pdflatex writes no
    clock time; the PDF is still not byte-stable across TeX versions, which is
    why it is not compared byte for byte.
    """
    return build_pdf(tex, files, name=name, pdflatex=pdflatex).pdf


def build_pdf(tex: str, files: dict, *, name: str = "chapter", pdflatex: str | None = None) -> PdfBuild:
    """:func:`compile_pdf`, keeping the log: pdflatex runs until ``.aux`` and ``.toc`` are stable."""
    pdflatex = pdflatex or find_pdflatex()
    if pdflatex is None:
        raise SymproofError("pdflatex is not installed; install texlive-latex-base, texlive-latex-recommended "
                            "and texlive-fonts-recommended, or read the .tex/.html reports")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}
    with tempfile.TemporaryDirectory(prefix="symproof-latex-") as work:
        for relative, content in {f"{name}.tex": tex.encode("utf-8"), **files}.items():
            path = os.path.join(work, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(content)
        previous = None
        for passes in range(1, MAX_PDFLATEX_PASSES + 1):
            run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
                                 cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
            log = run.stdout.decode("utf-8", "replace")
            if run.returncode != 0:
                errors = [line for line in log.splitlines() if line.startswith("!")]
                raise SymproofError(f"pdflatex failed on {name}.tex: " + ("; ".join(errors[:3]) or log[-800:]),
                                    exit_code=run.returncode)
            state = tuple(_read(os.path.join(work, f"{name}.{ext}")) for ext in ("aux", "toc"))
            if state == previous:
                break
            previous = state
        else:
            raise SymproofError(f"pdflatex on {name}.tex: the .aux/.toc still changed after "
                                f"{MAX_PDFLATEX_PASSES} passes (page references never settle)")
        toc = (_read(os.path.join(work, f"{name}.toc")) or b"").decode("utf-8", "replace")
        with open(os.path.join(work, f"{name}.pdf"), "rb") as handle:
            return PdfBuild(handle.read(), log, passes, toc)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
