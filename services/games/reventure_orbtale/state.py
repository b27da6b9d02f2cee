"""Orbtale state and the queries every other module shares (pure).

Secret parts of :class:`OState`: every player's ``hand``, ``inventory``, ``reserve`` and
``dealt`` heroes, the ``deck`` order and the chapter decks (views.py removes them).
Card conservation: ``deck + discard + every hand, inventory and active orbs`` is always the
whole pack (the cards on the table stay part of their hand, rulebook "Combat rules").
"""

from __future__ import annotations

from schemas.base import Record
from services.games.reventure_orbtale.content import CARDS, HEROES

MAX_HEALTH = 5
HAND_LIMIT = 3
ORBS = tuple(c for c, card in CARDS.items() if card.kind == "orb")


class Player(Record):
    hero: str | None = None
    """Current hero card (None before the pick and while defeated)."""
    reserve: tuple[str, ...] = ()
    dealt: tuple[str, ...] = ()
    """The 3 heroes dealt at setup (secret)."""
    health: int = MAX_HEALTH
    hand: tuple[str, ...] = ()
    inventory: tuple[str, ...] = ()
    active: tuple[str, ...] = ()
    """Active orbs (public)."""
    defeated: bool = False
    out: bool = False
    """No hero left: out of the game."""


class Duel(Record):
    attacker: int
    defender: int
    round: int = 1
    played: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """Revealed cards of this combat, ``(attacker's, defender's)``: unusable, still in hand."""
    last: tuple[str | None, str | None] = (None, None)
    """The cards of the round just revealed (None: that side had no card)."""


class OState(Record):
    """The whole rules state."""

    seats: int
    chapter_limit: int = 40
    phase: str = "setup"
    """``setup``, ``hero_pick``, ``organization``, ``combat``, ``duel``, ``reincarnation``, ``over``."""
    chapter: int = 0
    token: int = 0
    order: tuple[int, ...] = ()
    """Combat turn order of this chapter (from the token holder)."""
    turn_pos: int = 0
    players: tuple[Player, ...] = ()
    deck: tuple[str, ...] = ()
    """Treasure deck, top first."""
    discard: tuple[str, ...] = ()
    """Discard pile, top last."""
    chapter_decks: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    chapter_piles: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """Revealed chapter cards (top last)."""
    rule: tuple[str, str] | None = None
    duel: Duel | None = None
    attached: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Skills attached to hero cards (The Mimic), by hero id: they travel with the card (FAQ)."""
    reincarnating: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    win_reason: str = ""


def turn_order(s: OState) -> list[int]:
    """Every seat, clockwise from the turn-token holder (rulebook "Exploration phase")."""
    return [(s.token + i) % s.seats for i in range(s.seats)]


def in_play(s: OState, seat: int) -> bool:
    """The seat has a current hero (not defeated, not out)."""
    p = s.players[seat]
    return p.hero is not None and not p.defeated and not p.out


def playing(s: OState) -> list[int]:
    """Seats with a hero in play, in turn order."""
    return [i for i in turn_order(s) if in_play(s, i)]


def skills(s: OState, seat: int) -> set[str]:
    """The current hero's skills: its own plus any attached to its card."""
    hero = s.players[seat].hero
    if hero is None:
        return set()
    extra = dict(s.attached).get(hero, ())
    return {HEROES[hero].skill, *extra}


def has_orb_bonus(s: OState, seat: int, bonus: str) -> bool:
    return any(CARDS[o].bonus == bonus for o in s.players[seat].active)


def hand_limit(s: OState, seat: int) -> int:
    """3, +1 for the Juggler's skill, +1 for an active Orb of Wisdom."""
    return HAND_LIMIT + ("juggle" in skills(s, seat)) + has_orb_bonus(s, seat, "bigger_hand")


def orbs_owned(s: OState, seat: int) -> int:
    """Orbs in the seat's hand, inventory or active (rulebook "Winning conditions")."""
    p = s.players[seat]
    return sum(1 for c in (*p.hand, *p.inventory, *p.active) if CARDS[c].kind == "orb")


def unused(s: OState, seat: int) -> list[str]:
    """Hand cards the seat may still play in the current combat."""
    hand = s.players[seat].hand
    d = s.duel
    if d is None or seat not in (d.attacker, d.defender):
        return list(hand)
    played = d.played[0 if seat == d.attacker else 1]
    return [c for c in hand if c not in played]


def current_turn(s: OState) -> int | None:
    """The seat to attack or skip now (combat phase): the next seat of the order with a hero in play."""
    if s.phase != "combat":
        return None
    for seat in s.order[s.turn_pos:]:
        if in_play(s, seat):
            return seat
    return None


def tie_inventory(s: OState, seat: int) -> int:
    """Inventory size for breaking a tie (the Hoarder counts 2 fewer)."""
    n = len(s.players[seat].inventory)
    return max(0, n - 2) if "deep_pockets" in skills(s, seat) else n


def all_cards(s: OState) -> list[str]:
    """Every treasure card wherever it is (for the conservation property)."""
    out = list(s.deck) + list(s.discard)
    for p in s.players:
        out += [*p.hand, *p.inventory, *p.active]
    return out
