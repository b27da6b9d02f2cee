"""Chat grammar of Ero's Quest: ``develop b2``, ``purchase o3``, ``choose b4 [under s7 c11]``,
``forget o5 s9``, ``learn``, ``encounter [b5 s3] [orbs o1 o2] [deter]``, ``recover b11 b1``,
``rest``, ``hit c5``, ``attack b6 s3`` (``attack none``), ``support b13 [ally b8]`` (``support none``)."""

from __future__ import annotations

from typing import Any

from schemas.base import Command
from schemas.eros_quest import (
    Attack,
    Choose,
    Develop,
    Encounter,
    Forget,
    Learn,
    Purchase,
    Recover,
    Rest,
    Support,
    TakeHit,
)
from services.frontends.chat.common import ChatError, short
from services.frontends.chat.questeros import CARD

HELP = """Ero's Quest (cards b/s/o/c + value, e.g. b2, s11):
  develop CARD | purchase ORB | choose CARD [under CARD ...] | forget CARD ... | learn
  encounter [CARD ...] [orbs ORB ...] [deter] | recover COURT TARGET | rest
  combat: hit CARD | attack [BLADE] [STAFF] | attack none | support [BONUS] [ally CARD] | support none"""


def _cards(words: list[str]) -> list[str]:
    for w in words:
        if not CARD.match(w) or w.startswith("e"):
            raise ChatError(f"{w!r} is not a Class card id (b2, s11, o3, c14).")
    return list(words)


def _one(rest: list[str], usage: str) -> str:
    if len(rest) != 1:
        raise ChatError(f"Write `{usage}`.")
    return _cards(rest)[0]


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """An Ero's Quest command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head == "develop":
        return Develop(card=_one(rest, "develop CARD"))
    if head == "purchase":
        return Purchase(orb=_one(rest, "purchase ORB"))
    if head == "choose":
        if not rest:
            raise ChatError("Write `choose CARD [under CARD ...]`.")
        under = rest[2:] if len(rest) > 1 and rest[1] == "under" else []
        if len(rest) > 1 and rest[1] != "under":
            raise ChatError("Write `choose CARD under CARD CARD ...` (the order they go under the deck).")
        return Choose(card=_cards(rest[:1])[0], bottom=_cards(under))
    if head == "forget":
        return Forget(cards=_cards(rest))
    if head in ("learn", "rest"):
        return Learn() if head == "learn" else Rest()
    if head == "encounter":
        deter = "deter" in rest
        rest = [w for w in rest if w != "deter"]
        orbs = rest[rest.index("orbs") + 1:] if "orbs" in rest else []
        cards = rest[:rest.index("orbs")] if "orbs" in rest else rest
        return Encounter(cards=_cards(cards), orbs=_cards(orbs), deter=deter)
    if head == "recover":
        if len(rest) != 2:
            raise ChatError("Write `recover COURT TARGET`, e.g. `recover b11 b1`.")
        a, b = _cards(rest)
        return Recover(card=a, target=b)
    if head == "hit":
        return TakeHit(card=_one(rest, "hit CARD"))
    if head == "attack":
        cards = [] if rest == ["none"] else _cards(rest)
        blade = next((c for c in cards if c.startswith("b")), "")
        staff = next((c for c in cards if c.startswith("s")), "")
        if len(cards) != bool(blade) + bool(staff):
            raise ChatError("Write `attack [BLADE] [STAFF]`: one Blades and/or one Staves card.")
        return Attack(blade=blade, staff=staff)
    if head == "support":
        if rest == ["none"]:
            return Support()
        ally = rest[rest.index("ally") + 1] if "ally" in rest and rest.index("ally") + 1 < len(rest) else ""
        bonus = [w for w in rest if w not in ("ally", ally)]
        return Support(bonus=_cards(bonus)[0] if bonus else "", ally=_cards([ally])[0] if ally else "")
    raise ChatError(f"Unknown word {head!r} for Ero's Quest: try develop, purchase, encounter, rest or help.")


def format(cmd: Command) -> str:
    """The chat line of an Ero's Quest command."""
    if isinstance(cmd, Develop):
        return f"develop {cmd.card}"
    if isinstance(cmd, Purchase):
        return f"purchase {cmd.orb}"
    if isinstance(cmd, Choose):
        return f"choose {cmd.card}" + (" under " + " ".join(cmd.bottom) if cmd.bottom else "")
    if isinstance(cmd, Forget):
        return "forget " + " ".join(cmd.cards)
    if isinstance(cmd, (Learn, Rest)):
        return "learn" if isinstance(cmd, Learn) else "rest"
    if isinstance(cmd, Encounter):
        words = ["encounter", *cmd.cards] + (["orbs", *cmd.orbs] if cmd.orbs else []) + (["deter"] if cmd.deter else [])
        return " ".join(words)
    if isinstance(cmd, Recover):
        return f"recover {cmd.card} {cmd.target}"
    if isinstance(cmd, TakeHit):
        return f"hit {cmd.card}"
    if isinstance(cmd, Attack):
        return "attack " + (" ".join(c for c in (cmd.blade, cmd.staff) if c) or "none")
    if isinstance(cmd, Support):
        if not cmd.bonus and not cmd.ally:
            return "support none"
        return "support" + (f" {cmd.bonus}" if cmd.bonus else "") + (f" ally {cmd.ally}" if cmd.ally else "")
    raise ChatError(f"Not an Ero's Quest command: {cmd!r}")


def _stack(cards: list[dict]) -> str:
    return " ".join(c["card"] + ("*" if c["used"] else "") for c in cards)


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """A few lines: turn, play area (``*`` = Used), next Encounter, combat, hand."""
    nxt = v.get("next_encounter")
    lines = [f"turn {v['turn']} {v['phase']}; deck {v['deck_count']}; done {', '.join(v['actions_done']) or '-'}",
             f"blades {_stack(v['blades'])} | staves {_stack(v['staves'])} | orbs {_stack(v['orbs'])}",
             f"cups {_stack(v['cups'])}" + (f" | allies {' '.join(v['allies'])}" if v["allies"] else ""),
             f"next: {nxt['name']}: {nxt['text']}" if nxt else "no Encounter left"]
    if v.get("combat"):
        c = v["combat"]
        lines.append(f"combat with {c['epic']} ({c['value']}): dealt {c['dealt']}, step {c['step']}, hit to absorb {c['hit_remaining']}")
    if seat is not None:
        lines.append(f"hand: {short(v['hand'], 14)}" + (f"; looking at {short(v['looking'])}" if v["looking"] else "")
                     + (f"; bonus Develop: {short(v['bonus'])}" if v["bonus"] else ""))
    return "\n".join(lines)


def render_event(b: dict, who: Any) -> str:
    """One Ero's Quest event as a short sentence."""
    t = b["type"].removeprefix("eros_quest.")
    if t == "card_developed":
        return f"{b['card']} developed onto {b['stack']}" + (" (bonus)" if b.get("bonus") else "")
    if t == "encounter_faced":
        return f"Ero faces {b['epic']}" + (f" giving {short(b['cards'])}" if b.get("cards") else "")
    if t == "attacked":
        return f"attack for {b['damage']} ({b['dealt']} dealt)"
    if t == "hit_taken":
        return f"{b['card']} absorbs the hit ({b['remaining']} left)"
    if t == "encounter_completed":
        return f"{b['epic']} completed" + (" (defeated)" if b.get("defeated") else "")
    if t == "rested":
        return f"rest: {b['burned']} burned; turn {b['turn']}"
    if t == "quest_ended":
        return "Ero defeats the Dragon!" if b["won"] else f"the quest is lost ({b['reason']})"
    return t.replace("_", " ")
