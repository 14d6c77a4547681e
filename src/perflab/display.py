"""How strings that perflab did not write are shown: on a terminal and in an HTML page.

Treatment levels, statuses and errors come from imported CSVs, stores, catalogs and black-box
commands -- anyone's text.  A terminal obeys the escape sequences in it (set the window
title, write the clipboard with OSC 52, clear the screen, forge hyperlinks), so everything the
CLI prints passes :func:`printable`, which keeps only the sequences perflab's own output uses
(colours, and the cursor moves of a progress bar) and shows any other control character as
``\\xNN``.  Every HTML page carries :data:`CSP`: no script, no fetch, images inline.
"""

from __future__ import annotations

import math
import re
from typing import Any, TextIO

#: The one Content-Security-Policy of every page perflab writes: nothing runs, nothing loads.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'

#: Sequences rich writes itself: SGR colours, cursor up/down/column, erase line, show/hide
#: cursor. Nothing here changes the terminal's state beyond the lines perflab draws.
_OWN = r"\x1b\[[0-9;?]*[mABGKlh]"
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
_SPLIT = re.compile(f"({_OWN})|({_CONTROL})")


def printable(text: str) -> str:
    """``text`` with every control character other than tab, newline, carriage return and
    perflab's own colour/cursor sequences shown as ``\\xNN``."""
    return _SPLIT.sub(lambda m: m.group(1) or f"\\x{ord(m.group(2)):02x}", text)


class PrintableStream:
    """A text stream that writes :func:`printable` text to the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_streams() -> None:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`PrintableStream` (idempotent)."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, PrintableStream):
            setattr(sys, name, PrintableStream(stream))


def decimals(level: float | None, least: int = 1, sig: int = 3) -> int:
    """Decimals that show numbers of magnitude ``level`` (the metric's typical value) to
    ``sig`` significant digits, and never fewer than ``least``: µs per task (level ~100)
    keeps one, a wall time of 1.2 s gets two, so a -0.3 s effect is not "-0.3 .. -0.3"."""
    if level is None or not math.isfinite(level) or level == 0:
        return least
    return max(least, sig - 1 - math.floor(math.log10(abs(level))))


def number(x: float | None, digits: int = 1, missing: str = "-") -> str:
    """``x`` with thousands separators and ``digits`` decimals; ``missing`` for None."""
    return missing if x is None else f"{x:,.{digits}f}"
