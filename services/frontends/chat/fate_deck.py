"""Chat grammar of the Fate Deck: GM ``award 2``, ``reveal 2``, ``roll [2]``, ``read 3``, ``end``;
player ``hand in b5 e3``."""

from __future__ import annotations

from typing import Any

from schemas.base import Command
from schemas.fate_deck import Award, EndSession, HandIn, Read, Reveal, Roll
from services.frontends.chat.common import ChatError, integer, short
from services.frontends.chat.questeros import card

HELP = """Fate Deck (seat 0 is the GM):
  GM: award SEAT | reveal SEAT | roll [SEAT] (a d20) | read N (1-10 cards) | end
  player: hand in CARD ... (your awarded cards, e.g. hand in b5 e3)"""


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """A Fate Deck command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head in ("award", "reveal"):
        if len(rest) != 1:
            raise ChatError(f"Write `{head} SEAT`.")
        p = integer(rest[0].removeprefix("seat"), "A seat", 1, 32)
        return Award(player=p) if head == "award" else Reveal(player=p)
    if head == "roll":
        return Roll(player=integer(rest[0].removeprefix("seat"), "A seat", 1, 32) if rest else None)
    if head == "read":
        return Read(cards=integer(rest[0], "A reading", 1, 10) if rest else 3)
    if head in ("end", "end_session"):
        return EndSession()
    if head == "hand":
        cards = rest[1:] if rest[:1] == ["in"] else rest
        if not cards:
            raise ChatError("Write `hand in CARD ...`.")
        return HandIn(cards=[card([w]) for w in cards])
    raise ChatError(f"Unknown word {head!r} for the Fate Deck: try award, reveal, roll, read, end, hand in or help.")


def format(cmd: Command) -> str:
    """The chat line of a Fate Deck command."""
    if isinstance(cmd, Award):
        return f"award {cmd.player}"
    if isinstance(cmd, Reveal):
        return f"reveal {cmd.player}"
    if isinstance(cmd, Roll):
        return "roll" + (f" {cmd.player}" if cmd.player is not None else "")
    if isinstance(cmd, Read):
        return f"read {cmd.cards}"
    if isinstance(cmd, EndSession):
        return "end"
    if isinstance(cmd, HandIn):
        return "hand in " + " ".join(cmd.cards)
    raise ChatError(f"Not a Fate Deck command: {cmd!r}")


def _card(c: dict) -> str:
    """A card's name and the first words of its meaning (the whole meaning is in the view)."""
    return f"{c['name']} ({c['meaning'].split('.')[0][:40]})"


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """A few lines: your role, the players' FATE cards as you may see them, the last reading and roll."""
    lines = [f"{v['role']}; session {'open' if v['open'] else 'ended'}; deck {v['deck_count']}; acts {v['acts']}"]
    for p in v["players"]:
        fate = _card(p["fate"]) if p.get("fate") else ("secret" if p["has_fate"] else "none")
        acq = short([c["card"] for c in p["acquired"]], 8) if p["acquired"] else str(p["acquired_count"])
        lines.append(f"seat {p['seat']}: FATE {fate}{' (revealed)' if p['revealed'] else ''}; acquired {acq}")
    if v["readings"]:
        r = v["readings"][-1]
        lines.append("reading" + (f" [{r['tone']}]" if r["tone"] else "") + ": " + "; ".join(_card(c) for c in r["cards"]))
    if v["rolls"]:
        lines.append(f"last d20: {v['rolls'][-1]['value']}")
    return "\n".join(lines)


def render_event(b: dict, who: Any) -> str:
    """One Fate Deck event as a short sentence."""
    t = b["type"].removeprefix("fate_deck.")
    if t == "fate_assigned":
        return "the GM draws a secret FATE card for each player"
    if t == "card_awarded":
        got = b["drawing"]["cards"]
        return f"{who(b['player'])} earns a FATE card" + (f": {short(got)}" if got else "")
    if t == "fate_revealed":
        return f"{who(b['player'])}'s FATE card is {b['card']}"
    if t == "die_rolled":
        return f"d{b['sides']} roll: {b['value']}" + (f" for {who(b['player'])}" if b.get("player") is not None else "")
    if t == "cards_handed_in":
        return f"{who(b['player'])} hands in {short(b['cards'])}: a FATE event"
    if t == "reading_drawn":
        d = b["drawing"]
        return f"reading: {short(d['cards'])}" + (f" [{d['tone']}]" if d["tone"] else "")
    if t == "session_ended":
        return "the GM ends the session"
    return t.replace("_", " ")
