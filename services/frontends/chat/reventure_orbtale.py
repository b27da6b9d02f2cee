"""Chat grammar of Reventure: Orbtale: ``pick monk``, ``hand sword1 map2 discard spear1``,
``attack 2``, ``skip``, ``play shield3``."""

from __future__ import annotations

from typing import Any

from schemas.base import Command
from schemas.reventure_orbtale import Attack, Organize, PickHero, PlayCard, Skip
from services.frontends.chat.common import ChatError, card, choice_event, integer, short
from services.games.reventure_orbtale.content import CARDS, HEROES

HELP = """Reventure: Orbtale:
  pick HERO                      pick your hero (setup) or the hero to reincarnate (secret until all chose)
  hand CARD... [discard CARD...] organization: up to 3 cards to your hand, others to discard (secret)
  attack SEAT | skip             combat phase, on your turn
  play CARD                      your face-down card in a combat round (secret until both chose)
Cards by id: sword1, greatsword2, shield1, map3, orb_life ... (see `view`). You may change a
secret choice until the last player has chosen. Heroes: """ + ", ".join(HEROES)

_HERO_WORDS = {h: h for h in HEROES} | {HEROES[h].name.lower().replace(" ", "_"): h for h in HEROES} | {"mimic": "the_mimic"}


def _card(word: str) -> str:
    return card(word, CARDS, "sword1 or orb_life")


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """An Orbtale command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head == "pick":
        name = "_".join(rest)
        if name not in _HERO_WORDS:
            raise ChatError(f"No hero {' '.join(rest)!r}: pick one of {', '.join(HEROES)}.")
        return PickHero(hero=_HERO_WORDS[name])
    if head in ("hand", "organize", "keep"):
        if "discard" in rest:
            i = rest.index("discard")
            hand, discard = rest[:i], rest[i + 1:]
        else:
            hand, discard = rest, []
        hand = [w for w in hand if w not in ("none", "-")]
        return Organize(hand=[_card(w) for w in hand], discard=[_card(w) for w in discard])
    if head == "attack":
        if len(rest) != 1:
            raise ChatError("Write `attack SEAT`, e.g. `attack 2`.")
        return Attack(target=integer(rest[0].removeprefix("seat"), "A seat", 0, 3))
    if head in ("skip", "pass"):
        return Skip()
    if head == "play":
        if len(rest) != 1:
            raise ChatError("Write `play CARD`, e.g. `play sword1`.")
        return PlayCard(card=_card(rest[0]))
    raise ChatError(f"Unknown word {head!r} for Orbtale: try pick, hand, attack, skip, play or help.")


def format(cmd: Command) -> str:
    """The chat line of an Orbtale command."""
    if isinstance(cmd, PickHero):
        return f"pick {cmd.hero}"
    if isinstance(cmd, Organize):
        return "hand " + (" ".join(cmd.hand) or "none") + (" discard " + " ".join(cmd.discard) if cmd.discard else "")
    if isinstance(cmd, Attack):
        return f"attack {cmd.target}"
    if isinstance(cmd, Skip):
        return "skip"
    if isinstance(cmd, PlayCard):
        return f"play {cmd.card}"
    raise ChatError(f"Not an Orbtale command: {cmd!r}")


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """A few lines: chapter and rule, the players, the combat, your cards."""
    rule = v["rule"]["text"] if v.get("rule") else "-"
    lines = [f"chapter {v['chapter']} {v['phase']}; token {names[v['token']]}; deck {v['deck_count']}; rule: {rule}"]
    for p in v["players"]:
        state = "out" if p["out"] else "defeated" if p["defeated"] else f"{p['health']} hp"
        orbs = f" orbs {' '.join(p['active_orbs'])}" if p["active_orbs"] else ""
        lines.append(f"  {names[p['seat']]}: {p['hero'] or '?'} {state}, hand {p['hand_count']}, "
                     f"inventory {p['inventory_count']}, reserve {p['reserve_count']}{orbs}")
    if v.get("combat"):
        c = v["combat"]
        lines.append(f"combat: {names[c['attacker']]} vs {names[c['defender']]} round {c['round']}; "
                     f"played {short(c['played'][0], 4)} / {short(c['played'][1], 4)}")
    if seat is not None:
        lines.append(f"hand: {short(v['hand'], 8) or '-'} | inventory: {short(v['inventory'], 10) or '-'}"
                     + (f" | pick from: {' '.join(v['offered'])}" if v.get("offered") else ""))
    return "\n".join(lines)


def render_event(b: dict, who: Any) -> str:
    """One Orbtale event as a short sentence."""
    t = b["type"].removeprefix("reventure_orbtale.")
    if (said := choice_event(t, b, who, format, PickHero | Organize | PlayCard)) is not None:
        return said
    if t == "chapter_started":
        return f"chapter {b['chapter']} begins: rule {b['who']} / {b['what']}"
    if t == "cards_drawn":
        return f"{who(b['seat'])} draws {b['count']} ({b['reason']})" + (f": {' '.join(b['cards'])}" if b["cards"] else "")
    if t == "cards_discarded":
        return f"{who(b['seat'])} discards {' '.join(b['cards'])}"
    if t == "attack_declared":
        return f"{who(b['attacker'])} attacks {who(b['defender'])}"
    if t == "attack_skipped":
        return f"{who(b['seat'])} skips"
    if t == "round_resolved":
        return f"round {b['round']}: " + (f"{who(b['winner'])} wins ({b['why']})" if b["winner"] is not None else b["why"].replace("_", " "))
    if t == "damage_dealt":
        return f"{who(b['seat'])} takes {b['amount']} damage ({b['health']} left)"
    if t == "healed":
        return f"{who(b['seat'])} heals {b['amount']} ({b['health']})"
    if t == "cards_stolen":
        return f"{who(b['thief'])} steals {b['count']} from {who(b['victim'])}" + (f": {' '.join(b['cards'])}" if b["cards"] else "")
    if t == "hero_eliminated":
        return f"{who(b['seat'])}'s {b['hero']} is eliminated ({b['reserve']} in reserve)"
    if t == "hero_reincarnated":
        return f"{who(b['seat'])} reincarnates as {b['hero']}"
    if t == "game_won":
        return f"game won by {', '.join(who(s) for s in b['winners']) or 'nobody'} ({b['reason']})"
    return t.replace("_", " ")

