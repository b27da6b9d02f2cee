"""Ero's Quest bots: ``fn(view, seat, rng) -> Command``; each sees only the player's view.

- ``random``: a uniformly random entry of ``view.legal``.
- ``adventurer``: develops whenever it can (the bonus Develop first), keeps a reserve of deck
  cards for the turns the remaining Encounters need, faces the next Encounter as soon as its
  requirement can be met (a Combat when its Cups and attack look strong enough, or when the
  deck is too short to wait), absorbs hits with the fewest Cups, attacks with the smallest
  winning combination (else the strongest), and always calls its support. Its win share is
  a balance figure in ``make bench``.
"""

from __future__ import annotations

import random

from schemas.base import Command
from schemas.eros_quest import (
    Attack,
    Choose,
    Develop,
    Encounter,
    ErosQuestView,
    Forget,
    Learn,
    Purchase,
    Recover,
    Rest,
    Support,
    TakeHit,
)
from services.games.questeros.eros.encounters import PACK
from services.games.questeros.eros.rules import CARDS, worth


def random_bot(view: ErosQuestView, seat: int, rng: random.Random) -> Command:
    """A random legal command. Raises IndexError if there is nothing to do."""
    return rng.choice(view.legal)


def _tops(v: ErosQuestView) -> dict[str, int]:
    return {st: CARDS[getattr(v, st)[-1].card].value for st in ("blades", "staves", "orbs")}


def _score(v: ErosQuestView, card: str) -> float:
    """How much the bot wants ``card`` in hand."""
    c = CARDS[card]
    tops = _tops(v)
    if c.cls in tops and c.value <= 10:
        gap = c.value - tops[c.cls]
        return 100 - 10 * gap if gap >= 1 else 0
    if c.value >= 11:
        return 40 + c.value + (10 if c.cls in ("blades", "staves") else 0)
    return 1


def _unused(cards) -> list[str]:
    return [p.card for p in cards if not p.used and p.card != "s1"]


def _rounds(v: ErosQuestView, epic: str) -> int | None:
    """Combat rounds the bot needs to defeat ``epic`` with what it has (None: it cannot): each
    round Uses the next best Blades and Staves cards, one Bonus card and one Ally."""
    value = worth(epic)
    cols = [sorted((worth(c) for c in _unused(v.blades)), reverse=True),
            sorted((worth(c) for c in _unused(v.staves)), reverse=True),
            sorted((worth(c) for c in v.hand if CARDS[c].cls in ("blades", "staves") and CARDS[c].value >= 11), reverse=True)]
    if not PACK[epic].params.get("no_allies"):
        cols.append(sorted((worth(c) for c in v.allies), reverse=True))
    dealt = 0
    for r in range(1, 11):
        dealt += sum(col[r - 1] for col in cols if len(col) >= r)
        if dealt >= value:
            return r
    return None


def _health(v: ErosQuestView, epic: str) -> int:
    classes = PACK[epic].params.get("damage_in", ["cups"])
    return sum(worth(c) for cls in classes for c in _unused(getattr(v, cls)))


def _ready_for_combat(v: ErosQuestView, epic: str) -> bool:
    r = _rounds(v, epic)
    return r is not None and _health(v, epic) >= (worth(epic) + 1) * r + (worth(epic) if epic != "e21" else 0) // 2


def _orbs_to_keep(v: ErosQuestView) -> int:
    """Orb value to keep Unused for an Encounter within the next 4 Epics that Uses Orbs."""
    first = 21 - v.epics_left + 1
    soon = [PACK[f"e{n}"] for n in range(first, min(first + 4, 22))]
    return max((e.params.get("total", 0) or e.params.get("deter_orbs", 0) for e in soon), default=0)


def adventurer_bot(view: ErosQuestView, seat: int, rng: random.Random) -> Command:
    """The ``adventurer`` policy described in the module docstring."""
    v = view
    legal = v.legal
    kinds: dict[type, list] = {}
    for c in legal:
        kinds.setdefault(type(c), []).append(c)
    if Choose in kinds:
        return max(kinds[Choose], key=lambda c: _score(v, c.card))
    if TakeHit in kinds:
        need = v.combat.hit_remaining if v.combat else 0
        opts = [c.card for c in kinds[TakeHit]]
        cups = [c for c in opts if CARDS[c].cls == "cups"] or opts
        enough = [c for c in cups if worth(c) >= need]
        return TakeHit(card=min(enough, key=worth) if enough else max(cups, key=worth))
    if Attack in kinds:
        left = v.combat.value - v.combat.dealt if v.combat else 0

        def dmg(a: Attack) -> int:
            return sum(worth(c) for c in (a.blade, a.staff) if c)
        wins = [a for a in kinds[Attack] if dmg(a) >= left]
        return min(wins, key=dmg) if wins else max(kinds[Attack], key=dmg)
    if Support in kinds:
        return max(kinds[Support], key=lambda s: sum(worth(c) for c in (s.bonus, s.ally) if c))
    # A turn.
    reserve = v.epics_left + 3
    dev = kinds.get(Develop, [])
    bonus = [d for d in dev if d.card in v.bonus]
    if bonus:
        return bonus[0]
    if dev:
        return dev[0]
    if Recover in kinds:
        return max(kinds[Recover], key=lambda r: worth(r.target))
    if Learn in kinds and len(v.hand) <= 4 and v.deck_count - (5 - len(v.hand)) > reserve:
        return Learn()
    if Purchase in kinds and v.deck_count - 1 > reserve:
        keep = _orbs_to_keep(v)
        spend = [p for p in kinds[Purchase] if sum(worth(o) for o in _unused(v.orbs)) - worth(p.orb) >= keep]
        if spend:
            return max(spend, key=lambda p: worth(p.orb))
    encs = kinds.get(Encounter, [])
    if encs and v.next_encounter is not None:
        epic = v.next_encounter.epic
        enc = PACK[epic]
        if enc.require == "combat":
            deters = [e for e in encs if e.deter]
            if deters:
                return min(deters, key=lambda e: sum(_score(v, c) for c in e.cards) + 10 * len(e.orbs))
            if _ready_for_combat(v, epic) or v.deck_count <= reserve - 2:
                return Encounter()
        elif enc.require == "ally":
            allies = [e for e in encs if e.cards]
            return max(allies, key=lambda e: worth(e.cards[0]) - _score(v, e.cards[0]) / 20) if allies else encs[0]
        else:
            return min(encs, key=lambda e: sum(_score(v, c) for c in e.cards) - len(e.cards) * 0.5 + len(e.orbs))
    if Learn in kinds and v.deck_count - (5 - len(v.hand)) > reserve - 2:
        return Learn()
    dead = [c for c in v.hand if _score(v, c) <= 1]
    if Forget in kinds and dead and len(v.hand) >= 5:
        return Forget(cards=dead)
    return Rest()
