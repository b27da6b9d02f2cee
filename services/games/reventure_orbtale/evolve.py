"""Orbtale ``evolve``: fold one event into the state. Pure and total; only sets fields.

Source: the events' docstrings in schemas/reventure_orbtale.py; where cards go is
RULINGS.md "Reventure: Orbtale" (which card is used) and the rulebook FAQ (orbs to the deck top).
"""

from __future__ import annotations

import msgspec

from schemas.base import Event
from schemas.reventure_orbtale import (
    AttackDeclared,
    AttackSkipped,
    CardsDiscarded,
    CardsDrawn,
    CardsStolen,
    ChapterDecksShuffled,
    ChapterEnded,
    ChapterStarted,
    CombatEnded,
    DamageDealt,
    DeckReshuffled,
    GameSetUp,
    GameWon,
    Healed,
    HeroEliminated,
    HeroesSwapped,
    HeroReincarnated,
    Organize,
    PickHero,
    PlayCard,
    ReincarnationPending,
    Revealed,
    RoundResolved,
    SkillsAttached,
)
from services.games.reventure_orbtale.content import CARDS
from services.games.reventure_orbtale.state import Duel, OState, Player, playing
from services.kernel.tuples import put, without

rep = msgspec.structs.replace


def _player(s: OState, seat: int, **changes) -> OState:
    if not 0 <= seat < len(s.players):
        return s
    return rep(s, players=put(s.players, seat, rep(s.players[seat], **changes)))


def _to_discard(s: OState, cards) -> OState:
    """Discard ``cards``: orbs on top of the deck (FAQ), the rest on the discard pile."""
    deck, pile = s.deck, s.discard
    for c in cards:
        if c in CARDS and CARDS[c].kind == "orb":
            deck = (c,) + deck
        else:
            pile = pile + (c,)
    return rep(s, deck=deck, discard=pile)


def _revealed(s: OState, ev: Revealed) -> OState:
    kind = ev.key.split(":", 1)[0]
    if kind == "hero":
        for m in ev.choices:
            if isinstance(m.choice, PickHero):
                p = s.players[m.seat]
                s = _player(s, m.seat, hero=m.choice.hero, reserve=tuple(h for h in p.dealt if h != m.choice.hero))
        return s
    if kind == "organize":
        for m in ev.choices:
            if isinstance(m.choice, Organize):
                p = s.players[m.seat]
                s = _player(s, m.seat, hand=p.hand + tuple(m.choice.hand), inventory=without(p.inventory, m.choice.hand))
        order = tuple(playing(s))
        return rep(s, phase="combat", order=order, turn_pos=0)
    if kind == "duel" and s.duel is not None:
        d = s.duel
        last: list[str | None] = [None, None]
        played = [d.played[0], d.played[1]]
        for m in ev.choices:
            if not isinstance(m.choice, PlayCard):
                continue
            side = 0 if m.seat == d.attacker else 1
            card = m.choice.card
            last[side] = card
            played[side] = played[side] + (card,)
            if card in CARDS and CARDS[card].kind == "orb":  # an orb becomes active whenever played
                p = s.players[m.seat]
                s = _player(s, m.seat, hand=without(p.hand, [card]), active=p.active + (card,))
        return rep(s, duel=rep(d, played=(played[0], played[1]), last=(last[0], last[1])))
    return s


def _turn_after(s: OState, seat: int) -> int:
    return s.order.index(seat) + 1 if seat in s.order else len(s.order)


def evolve(s: OState, ev: Event) -> OState:
    """Fold one event. Never validates, never raises on a stored event."""
    if isinstance(ev, GameSetUp):
        players = tuple(Player(inventory=tuple(inv), dealt=tuple(h)) for inv, h in zip(ev.inventories, ev.heroes, strict=False))
        decks = tuple(tuple(d) for d in ev.chapter_decks) + ((), ())
        return rep(s, phase="hero_pick", token=ev.token, deck=tuple(ev.deck), players=players,
                   chapter_decks=(decks[0], decks[1]))
    if isinstance(ev, Revealed):
        return _revealed(s, ev)
    if isinstance(ev, ChapterDecksShuffled):
        decks, piles = list(s.chapter_decks), list(s.chapter_piles)
        if ev.deck in (0, 1):
            decks[ev.deck] = tuple(ev.order)
            piles[ev.deck] = ()
        return rep(s, chapter_decks=(decks[0], decks[1]), chapter_piles=(piles[0], piles[1]))
    if isinstance(ev, ChapterStarted):
        decks = tuple(d[1:] for d in s.chapter_decks)
        piles = (s.chapter_piles[0] + (ev.who,), s.chapter_piles[1] + (ev.what,))
        return rep(s, chapter=ev.chapter, rule=(ev.who, ev.what), phase="organization",
                   chapter_decks=(decks[0], decks[1]), chapter_piles=piles, duel=None)
    if isinstance(ev, CardsDrawn):
        if not 0 <= ev.seat < len(s.players):
            return s
        got = s.deck[:ev.count]
        return rep(_player(s, ev.seat, inventory=s.players[ev.seat].inventory + got), deck=s.deck[ev.count:])
    if isinstance(ev, DeckReshuffled):
        return rep(s, deck=s.deck + tuple(ev.deck), discard=())
    if isinstance(ev, CardsDiscarded):
        if not 0 <= ev.seat < len(s.players):
            return s
        p = s.players[ev.seat]
        s = _player(s, ev.seat, **({"hand": without(p.hand, ev.cards)} if ev.source == "hand"
                                   else {"inventory": without(p.inventory, ev.cards)}))
        return _to_discard(s, ev.cards)
    if isinstance(ev, AttackSkipped):
        return rep(s, turn_pos=_turn_after(s, ev.seat))
    if isinstance(ev, AttackDeclared):
        return rep(s, phase="duel", duel=Duel(attacker=ev.attacker, defender=ev.defender))
    if isinstance(ev, RoundResolved):
        if s.duel is not None and ev.why == "new_round":
            return rep(s, duel=rep(s.duel, round=s.duel.round + 1, last=(None, None)))
        return s
    if isinstance(ev, DamageDealt | Healed):
        return _player(s, ev.seat, health=ev.health)
    if isinstance(ev, CardsStolen):
        if not (0 <= ev.thief < len(s.players) and 0 <= ev.victim < len(s.players)):
            return s
        v = s.players[ev.victim]
        s = _player(s, ev.victim, **({"hand": without(v.hand, ev.cards)} if ev.source == "hand"
                                     else {"inventory": without(v.inventory, ev.cards)}))
        return _player(s, ev.thief, inventory=s.players[ev.thief].inventory + tuple(ev.cards))
    if isinstance(ev, HeroesSwapped):
        return _player(_player(s, ev.seat, hero=ev.hero), ev.other, hero=ev.other_hero)
    if isinstance(ev, SkillsAttached):
        rest = tuple((h, k) for h, k in s.attached if h != ev.hero)
        return rep(s, attached=rest + ((ev.hero, tuple(ev.skills)),))
    if isinstance(ev, CombatEnded):
        if ev.winner is not None and ev.used and ev.used_to in ("inventory", "discard"):
            w = s.players[ev.winner]
            if ev.used in w.hand:
                s = _player(s, ev.winner, hand=without(w.hand, [ev.used]))
                if ev.used_to == "inventory":
                    s = _player(s, ev.winner, inventory=s.players[ev.winner].inventory + (ev.used,))
                else:
                    s = _to_discard(s, [ev.used])
        return rep(s, phase="combat", duel=None, turn_pos=_turn_after(s, ev.attacker))
    if isinstance(ev, HeroEliminated):
        if not 0 <= ev.seat < len(s.players):
            return s
        p = s.players[ev.seat]
        return _player(s, ev.seat, hero=None, defeated=True, out=not p.reserve, health=0,
                       inventory=p.inventory + p.hand + p.active, hand=(), active=())
    if isinstance(ev, ReincarnationPending):
        return rep(s, phase="reincarnation", reincarnating=tuple(ev.seats))
    if isinstance(ev, HeroReincarnated):
        p = s.players[ev.seat] if 0 <= ev.seat < len(s.players) else None
        if p is None:
            return s
        s = _player(s, ev.seat, hero=ev.hero, reserve=tuple(h for h in p.reserve if h != ev.hero),
                    health=ev.health, defeated=False)
        return rep(s, reincarnating=tuple(x for x in s.reincarnating if x != ev.seat))
    if isinstance(ev, ChapterEnded):
        players = tuple(rep(p, inventory=p.inventory + p.hand, hand=()) for p in s.players)
        return rep(s, players=players, token=ev.token, phase="chapter_end", duel=None, reincarnating=())
    if isinstance(ev, GameWon):
        return rep(s, phase="over", winners=tuple(ev.winners), win_reason=ev.reason, duel=None)
    return s
