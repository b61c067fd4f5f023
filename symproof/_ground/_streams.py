"""The command's own output streams: whatever they are connected to, a failure is one line.

- :func:`tolerant_output`: a character stdout's or stderr's encoding cannot hold (an ASCII or Latin-1
  terminal, ``PYTHONIOENCODING=ascii``, ``LC_ALL=C``) is written as a replacement character, never
  raised mid-output;
- :func:`output_failure`: the one line for output that cannot be written at all (``> /dev/full``,
  a full disk, a vanished device).
"""

from __future__ import annotations

import errno
import sys

__all__ = ["tolerant_output", "output_failure"]

#: why output could not be written, in words
_REASONS = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "the disk quota is exceeded",
            errno.EFBIG: "the file is too large", errno.EIO: "an input/output error",
            errno.EBADF: "the output is closed", errno.EPIPE: "the reader of the output has gone"}


def tolerant_output() -> None:
    """Make stdout and stderr write an unencodable character as ``?`` instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if getattr(stream, "errors", None) == "strict":
                stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):  # not a text stream of ours (a test's capture): left as is
            pass


def output_failure(err: OSError) -> str:
    """The one line for an ``OSError`` raised while writing the command's output."""
    why = _REASONS.get(err.errno, (err.strerror or type(err).__name__).lower())
    return f"cannot write the output ({why})"
