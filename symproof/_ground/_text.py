"""Text from an input shown on a terminal: one line, no control characters, no escape sequences.

A title or a file name may hold ANSI escape sequences (which recolour, move
the cursor, retitle the window or clear the screen), carriage returns or line
separators that forge extra output lines.  Everything echoed from an input
goes through :func:`printable`; every error line through :func:`one_line`.
"""

from __future__ import annotations

import difflib
import unicodedata

__all__ = ["printable", "one_line", "did_you_mean"]

#: characters that are not text on a terminal: controls (C0, DEL, C1), format characters
#: (bidirectional overrides...), line and paragraph separators, surrogates, private use
_NOT_TEXT = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, format or separator character written as a visible escape."""
    out = []
    for ch in str(text):
        if ch == "\n" and keep_newlines:
            out.append(ch)
        elif ch == "\t":
            out.append(" ")
        elif unicodedata.category(ch) in _NOT_TEXT:
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def one_line(text) -> str:
    """:func:`printable` text on one line (a newline becomes a visible ``\\n``)."""
    return printable(text)


def did_you_mean(word: str, choices) -> str:
    """``"; did you mean X?"`` with the closest of ``choices`` to a mistyped ``word``, or ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""
