"""Chat grammar of Orange Quest: ``play hook3``, ``play mark1 on 2``, ``block``, ``pass``,
``convert hook1 cake2``, ``ability [CARD]``, ``use backpack1``, ``duel 2``, ``give 1 2 1``,
``propose 0 1 1``, ``accept``, ``gift 2 1``, ``fog hook2``, ``chaos hook2 cake1``, ``throw rock hook2``, ``pick hook2``."""

from __future__ import annotations

from typing import Any

from schemas.base import Command
from schemas.orange_quest import (
    Accept,
    Challenge,
    Convert,
    Distribute,
    GiveCandies,
    GiveCard,
    OQChoice,
    Pass,
    Pick,
    Play,
    Propose,
    PutIn,
    Throw,
    UseAbility,
    UseEquipment,
)
from services.frontends.chat.common import ChatError, card, choice_event, integer, short
from services.games.orange_quest.content import CARDS

HELP = """Orange Quest:
  play CARD [on SEAT] [item CARD]  play an action card (a curse, a mischief, a reduction names a seat;
                                   a Block outside a window names the seat and its equipment card)
  block                            Block the card on top of the response window (your first Block)
  pass                             pass in a response window, or end your turn (fight, party, duel)
  convert CARD...                  hand over 7: the surplus cards to your candy stash
  ability [CARD] | use CARD        your hero's ability (Mia names a card) | an equipment card
  duel SEAT                        at the party, on your turn: challenge a player
  give SEAT...                     hand out your Treasure cards or the others' reward, one seat per card
  propose SEAT... | accept         We had better agree: a seat per pool card | accept the proposal
  gift SEAT N                      after a duel you won: give a helper N of the candies won (pass: done)
  fog CARD | chaos CARD [CARD]     Fog of Generosity / Chaos (secret until all chose)
  throw rock|paper|scissors CARD   rock-paper-scissors sharing (secret); pick CARD: I take what I want
Cards by id: gvozdar1, hook3, dao_cola2, block5 ... (see `view`)."""

HIDDEN = frozenset({"orange_quest.stage"})
"""Events no chat room or player is shown (kit.room_lines): the day's program moving on says
nothing a reader needs (what the step does comes as its own events)."""


def _card(word: str) -> str:
    return card(word, CARDS, "hook3 or block1")


def _seat(word: str) -> int:
    return integer(word.removeprefix("seat"), "A seat", 0, 5)


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """An Orange Quest command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head == "play":
        if not rest:
            raise ChatError("Write `play CARD [on SEAT] [item CARD]`, e.g. `play mark1 on 2`.")
        card, target, item = _card(rest[0]), None, None
        tail = rest[1:]
        while tail:
            if len(tail) < 2 or tail[0] not in ("on", "item"):
                raise ChatError("After the card: `on SEAT` and, for a Block of equipment, `item CARD`.")
            if tail[0] == "on":
                target = _seat(tail[1])
            else:
                item = _card(tail[1])
            tail = tail[2:]
        return Play(card=card, target=target, item=item)
    if head == "block" and not rest:
        blocks = [c for c in (view or {}).get("hand", []) if c.startswith("block")]
        if not blocks:
            raise ChatError("You hold no Block.")
        return Play(card=blocks[0])
    if head in ("pass", "done", "skip") and not rest:
        return Pass()
    if head == "convert":
        return Convert(cards=[_card(w) for w in rest])
    if head == "ability":
        return UseAbility(card=_card(rest[0]) if rest else None)
    if head == "use" and len(rest) == 1:
        return UseEquipment(card=_card(rest[0]))
    if head in ("duel", "challenge") and len(rest) == 1:
        return Challenge(target=_seat(rest[0]))
    if head == "give":
        return Distribute(to=[_seat(w) for w in rest])
    if head == "propose":
        return Propose(to=[_seat(w) for w in rest])
    if head == "accept" and not rest:
        return Accept()
    if head == "gift":
        if len(rest) != 2:
            raise ChatError("Write `gift SEAT N`: give a helper N of the candies you won in the duel.")
        return GiveCandies(to=_seat(rest[0]), count=integer(rest[1], "A number of candies", 1, 3))
    if head == "fog" and len(rest) == 1:
        return GiveCard(card=_card(rest[0]))
    if head == "chaos":
        return PutIn(cards=[_card(w) for w in rest])
    if head == "throw" and len(rest) == 2:
        if rest[0] not in ("rock", "paper", "scissors"):
            raise ChatError("Throw rock, paper or scissors.")
        return Throw(shape=rest[0], card=_card(rest[1]))  # type: ignore[arg-type]
    if head == "pick" and len(rest) == 1:
        return Pick(card=_card(rest[0]))
    raise ChatError(f"Unknown word {head!r} for Orange Quest: try play, block, pass, duel or help.")


def format(cmd: Command) -> str:
    """The chat line of an Orange Quest command."""
    if isinstance(cmd, Play):
        return f"play {cmd.card}" + (f" on {cmd.target}" if cmd.target is not None else "") + (
            f" item {cmd.item}" if cmd.item else "")
    if isinstance(cmd, Pass):
        return "pass"
    if isinstance(cmd, Convert):
        return "convert " + " ".join(cmd.cards)
    if isinstance(cmd, UseAbility):
        return "ability" + (f" {cmd.card}" if cmd.card else "")
    if isinstance(cmd, UseEquipment):
        return f"use {cmd.card}"
    if isinstance(cmd, Challenge):
        return f"duel {cmd.target}"
    if isinstance(cmd, Distribute):
        return "give " + " ".join(map(str, cmd.to))
    if isinstance(cmd, Propose):
        return "propose " + " ".join(map(str, cmd.to))
    if isinstance(cmd, Accept):
        return "accept"
    if isinstance(cmd, GiveCandies):
        return f"gift {cmd.to} {cmd.count}"
    if isinstance(cmd, GiveCard):
        return f"fog {cmd.card}"
    if isinstance(cmd, PutIn):
        return "chaos " + " ".join(cmd.cards)
    if isinstance(cmd, Throw):
        return f"throw {cmd.shape} {cmd.card}"
    if isinstance(cmd, Pick):
        return f"pick {cmd.card}"
    raise ChatError(f"Not an Orange Quest command: {cmd!r}")


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """A few lines: day, location, boss, the players, the window, your cards."""
    lines = [f"day {v['day']}/{v['days']} {v['phase'] or '-'}; first {names[v['first']]}; "
             f"location {v['location'] or '-'} ({' '.join(v['signposts'])}); boss {v['boss'] or '-'}"
             + (f" health {v['boss_health']}" if v.get("boss_health") else "") + f"; deck {v['deck_count']}"]
    for i, p in enumerate(v["players"]):
        extra = (f", equipment {' '.join(p['equipment'])}" if p["equipment"] else "") + (
            f", curses {' '.join(p['curses'])}" if p["curses"] else "") + (
            f", damage {p['damage']}" if p["damage"] else "")
        lines.append(f"  {names[i]}: {p['hero']}{' (turned)' if p['hero_turned'] else ''}, hand {p['hand_count']}, "
                     f"candies {p['candies']}, trophies {len(p['trophies'])}{extra}")
    if v.get("chain"):
        lines.append("window: " + " <- ".join(f"{names[c['seat']]} {c['card']}" for c in v["chain"]))
    if v.get("pool"):
        lines.append(f"pool ({v['sharing']}): {short(v['pool'], 10)}")
    if seat is not None:
        lines.append(f"hand: {short(v['hand'], 10) or '-'}" + (f" | aside: {short(v['aside'])}" if v.get("aside") else ""))
    return "\n".join(lines)


def render_event(b: dict, who: Any) -> str:
    """One Orange Quest event as a short sentence."""
    t = b["type"].removeprefix("orange_quest.")
    if (said := choice_event(t, b, who, format, OQChoice)) is not None:
        return said
    if t == "moved":
        return f"{b['count']} card(s) {b['frm']} -> {b['to']} ({b['reason']})" + (f": {short(b['cards'], 6)}" if b["cards"] else "")
    if t == "card_played":
        return f"{who(b['seat'])} plays {b['card']}" + (f" on {who(b['target'])}" if b.get("target") is not None else "")
    if t == "passed":
        return f"{who(b['seat'])} passes"
    if t == "coin_flipped":
        return f"{who(b['seat'])} flips the coin: {'heads' if b['heads'] else 'tails'} ({b['reason']})"
    if t == "boss_revealed":
        return f"boss {b['boss']} with {b['health']} health"
    if t == "fight_ended":
        return ("the boss is defeated" if b["won"] else "the boss wins: everyone loses 2 candies") + (
            f"; leader {who(b['leader'])}" if b.get("leader") is not None else "")
    if t == "duel_ended":
        return f"duel {who(b['challenger'])} vs {who(b['challenged'])}: " + (
            f"{who(b['winner'])} wins {b['taken']} candies" if b.get("winner") is not None else "a draw")
    if t == "giving_opened":
        return f"{who(b['winner'])} may give helpers {', '.join(who(h) for h in b['helpers'])} up to {b['count']} candies won"
    if t == "candies_given":
        return f"{who(b['seat'])} gives {who(b['to'])} {b['count']} candies"
    if t == "game_ended":
        return f"final scores {b['scores']}"
    if t == "location_revealed":
        return f"location {b['location']}: {' '.join(b['signposts'])}"
    if t == "day_started":
        return f"day {b['day']} begins; first player {who(b['first'])}"
    return t.replace("_", " ")

