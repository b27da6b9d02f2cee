"""Helpers shared by the title grammars."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

import msgspec


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


def card(word: str, cards: Container[str], example: str) -> str:
    """``word`` if it is the id of one of ``cards``. Raises ChatError naming ``example`` ids."""
    if word not in cards:
        raise ChatError(f"No card {word!r}: name a card by its id, e.g. {example}.")
    return word


def choice_event(t: str, b: dict, who: Callable[[int | None], str], fmt: Callable[[Any], str],
                 choice_type: Any) -> str | None:
    """The kernel's secret-choice events of a title (``chosen``, ``revealed``: a choice is shown
    only where the reader may see it) as a sentence; None for any other event. ``t``: the event
    type without the title's prefix; ``fmt``: the title's ``format``; ``choice_type``: the type
    (or union) the title's choice commands decode to."""
    if t == "chosen":
        return f"{who(b['seat'])} has chosen" + (f": {fmt(msgspec.convert(b['choice'], choice_type))}"
                                                 if b.get("choice") else "")
    if t == "revealed":
        shown = [f"{who(c['seat'])} {fmt(msgspec.convert(c['choice'], choice_type))}" for c in b["choices"]
                 if c.get("choice")]
        return "choices revealed" + (f": {'; '.join(shown)}" if shown else "")
    return None
