"""Chat grammar of Questeros: ``bid 3``, ``play 11 blades``, ``play e5 pay``, ``look 2``."""

from __future__ import annotations

import re
from typing import Any

from schemas.base import Command
from schemas.questeros import Bid, LookAtHand, PlayCard
from services.frontends.chat.common import ChatError, integer, short

HELP = """Questeros:
  bid N                 bid N quests (1 to the cards in hand)
  play CARD [pay]       CARD: b11, 11 blades, blades 11, epic 5, e5, adwanis; `pay` spends 1 XP
  look SEAT | look none the Mentor's look at a seat's hand (or decline)
Cards: b/s/o/c = Blades, Staves, Orbs, Cups 1-14 (11 Page .. 14 King); e0-e21 Epics; adwanis, nekradis Gods."""

CLASSES = {"b": "b", "blade": "b", "blades": "b", "s": "s", "stave": "s", "staves": "s", "staff": "s",
           "o": "o", "orb": "o", "orbs": "o", "c": "c", "cup": "c", "cups": "c", "e": "e", "epic": "e", "epics": "e"}
GODS = ("adwanis", "nekradis")
CARD = re.compile(r"^([bsoc])(1[0-4]|[1-9])$|^e(1[0-9]|2[01]|[0-9])$")


def card(words: list[str]) -> str:
    """A card id from ``11 blades``, ``blades 11``, ``11 of blades``, ``b11``, ``epic 5``, a God."""
    ws = [w for w in words if w != "of"]
    if len(ws) == 1 and (CARD.match(ws[0]) or ws[0] in GODS):
        return ws[0]
    if len(ws) == 2:
        a, b = ws
        if a.isdigit() and b in CLASSES:
            a, b = b, a
        if a in CLASSES and b.isdigit():
            cid = CLASSES[a] + str(int(b))
            if CARD.match(cid):
                return cid
    raise ChatError(f"No card {' '.join(words)!r}: write b11, 11 blades, epic 5 or a God's name.")


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """A Questeros command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head == "bid":
        if len(rest) != 1:
            raise ChatError("Write `bid N`, e.g. `bid 3`.")
        return Bid(quests=integer(rest[0], "A bid", 1, 10))
    if head == "play":
        pay = bool(rest) and rest[-1] in ("pay", "paid", "xp")
        if pay:
            rest = rest[:-2] if len(rest) >= 2 and rest[-2] == "pay" else rest[:-1]
        if not rest:
            raise ChatError("Write `play CARD`, e.g. `play 11 blades` or `play e5 pay`.")
        return PlayCard(card=card(rest), pay_xp=pay)
    if head in ("look", "decline"):
        if head == "decline" or rest in (["none"], ["no"]):
            return LookAtHand(target=None)
        if len(rest) != 1:
            raise ChatError("Write `look SEAT` or `look none`.")
        return LookAtHand(target=integer(rest[0].removeprefix("seat"), "A seat", 0, 5))
    raise ChatError(f"Unknown word {head!r} for Questeros: try bid, play, look or help.")


def format(cmd: Command) -> str:
    """The chat line of a Questeros command."""
    if isinstance(cmd, Bid):
        return f"bid {cmd.quests}"
    if isinstance(cmd, PlayCard):
        return f"play {cmd.card}" + (" pay" if cmd.pay_xp else "")
    if isinstance(cmd, LookAtHand):
        return "look none" if cmd.target is None else f"look {cmd.target}"
    raise ChatError(f"Not a Questeros command: {cmd!r}")


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """A few lines: round, phase, hand, table, bids, quests, XP."""
    bids = " ".join("-" if b is None else str(b) for b in v["bids"])
    table = ", ".join(f"{names[p['seat']]} {p['card']}" for p in v["table"]) or "empty"
    lines = [f"round {v['round']} turn {v['turn']} {v['phase']}; preferred {v['preferred'] or '-'}; table: {table}",
             f"bids {bids} | quests {' '.join(map(str, v['quests_won']))} | xp {' '.join(map(str, v['xp']))} | deck {v['deck_count']}"]
    if seat is not None:
        lines.append(f"hand: {short(v['hand'], 14)}")
        if v.get("mentor_look"):
            m = v["mentor_look"]
            lines.append(f"your Mentor look at seat {m['target']}: {short(m['cards'], 14)}")
    return "\n".join(lines)


def render_event(b: dict, who: Any) -> str:
    """One Questeros event as a short sentence."""
    t = b["type"].removeprefix("questeros.")
    if t == "bid_made":
        return f"{who(b['seat'])} bids {b['quests']}"
    if t == "card_played":
        return f"{who(b['seat'])} plays {b['card']}" + (" paying 1 XP" if b.get("paid_xp") else "") + (f" ({b['ability']})" if b.get("ability") else "")
    if t == "quest_won":
        return f"{who(b['winner'])} wins the quest" if b["winner"] is not None else "both Gods: nobody wins the quest"
    if t == "hands_dealt":
        mine = [h for h in b["hands"] if h]
        return f"round {b['round']} dealt by {who(b['dealer'])}" + (f"; your hand: {short(mine[0], 10)}" if mine else "")
    if t == "round_scored":
        return f"round {b['round']} scored: xp {' '.join(map(str, b['xp']))}" + (f"; Questeros {who(b['questeros'])}" if b.get("questeros") is not None else "")
    if t == "dealer_chosen":
        return f"{who(b['dealer'])} deals first"
    if t == "epic_added":
        return f"{b['card']} goes into the deck"
    if t == "hand_looked_at":
        return f"{who(b['seat'])} looks at {who(b['target'])}'s hand" + (f": {short(b['cards'], 10)}" if b["cards"] else "")
    return t.replace("_", " ")
