"""Helpers shared by the title grammars."""

from __future__ import annotations


class ChatError(ValueError):
    """A chat line that does not parse; the message says what was expected."""


def integer(word: str, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """``word`` as an int within [lo, hi]. Raises ChatError naming ``what``."""
    try:
        n = int(word)
    except ValueError:
        raise ChatError(f"{what} must be a number, not {word!r}.") from None
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        raise ChatError(f"{what} must be {lo} to {hi}, not {n}.")
    return n


def cell(word: str) -> tuple[int, int]:
    """``q,r`` as a cell. Raises ChatError."""
    parts = word.replace("(", "").replace(")", "").split(",")
    if len(parts) != 2:
        raise ChatError(f"A cell is written q,r (e.g. 2,-1), not {word!r}.")
    return integer(parts[0], "q"), integer(parts[1], "r")


def short(items: list, n: int = 12) -> str:
    """At most ``n`` items joined by spaces (``+k`` for the rest)."""
    s = " ".join(str(i) for i in items[:n])
    return s + (f" +{len(items) - n}" if len(items) > n else "")
