"""What a seat or a spectator may see of Orbtale: ``view`` and ``redact``.

Public: heroes in play and their skills, health, card counts (hand, inventory, reserve),
active orbs, the discard pile, the chapter rule, the turn token, the combat and every card
revealed in it. Secret: other seats' hand, inventory and reserve contents, the heroes dealt
to others, the deck order, the chapter decks, cards drawn or stolen by others, and (kernel)
every secret choice before its reveal; an organization stays private after its reveal (the
discards are public through ``cards_discarded``).
"""

from __future__ import annotations

from schemas.base import Event
from schemas.reventure_orbtale import (
    CardsDrawn,
    CardsStolen,
    ChapterDecksShuffled,
    CombatView,
    DeckReshuffled,
    GameSetUp,
    OrbtaleView,
    PlayerView,
    Revealed,
    RuleView,
)
from services.games.reventure_orbtale.content import PACK, WHAT_TEXT, WHO_TEXT
from services.games.reventure_orbtale.rules import legal_commands
from services.games.reventure_orbtale.state import OState, current_turn, hand_limit, skills

_INDEX = {c: i for i, c in enumerate(PACK)}


def _sorted(cards) -> list[str]:
    return sorted(cards, key=lambda c: _INDEX.get(c, len(_INDEX)))


def view(s: OState, seat: int | None) -> OrbtaleView:
    """The view of ``s`` for ``seat`` (None: spectator)."""
    mine = seat is not None and 0 <= seat < s.seats
    players = [PlayerView(seat=i, hero=p.hero if s.phase != "hero_pick" else None,
                          skills=sorted(skills(s, i)) if s.phase != "hero_pick" else [],
                          health=p.health, hand_count=len(p.hand), inventory_count=len(p.inventory),
                          reserve_count=len(p.reserve) if s.phase != "hero_pick" else 2,
                          active_orbs=list(p.active), defeated=p.defeated, out=p.out)
               for i, p in enumerate(s.players)]
    rule = RuleView(who=s.rule[0], what=s.rule[1], text=f"{WHO_TEXT[s.rule[0]]} {WHAT_TEXT[s.rule[1]]}") if s.rule else None
    d = s.duel
    combat = CombatView(attacker=d.attacker, defender=d.defender, round=d.round,
                        played=[list(d.played[0]), list(d.played[1])]) if d is not None else None
    phase = s.phase if s.phase in ("hero_pick", "organization", "combat", "duel", "reincarnation", "over") else "combat"
    me = s.players[seat] if mine else None
    offered: list[str] = []
    if me is not None and s.phase == "hero_pick":
        offered = list(me.dealt)
    elif me is not None and s.phase == "reincarnation" and seat in s.reincarnating:
        offered = list(me.reserve)
    return OrbtaleView(
        phase=phase, chapter=s.chapter, token=s.token, rule=rule, deck_count=len(s.deck),
        discard=list(s.discard), players=players, turn=current_turn(s), combat=combat,
        hand=_sorted(me.hand) if me else [], inventory=_sorted(me.inventory) if me else [],
        reserve=list(me.reserve) if me else [], offered=offered,
        hand_limit=hand_limit(s, seat) if mine else 3,  # type: ignore[arg-type]
        legal=legal_commands(s, seat) if mine else [],  # type: ignore[arg-type]
        winners=list(s.winners),
    )


def redact(ev: Event, seat: int | None) -> Event | None:
    """``ev`` as ``seat`` may see it (secret lists emptied; counts kept)."""
    if isinstance(ev, GameSetUp):
        return GameSetUp(token=ev.token, deck=[], deck_count=ev.deck_count,
                         inventories=[inv if i == seat else [] for i, inv in enumerate(ev.inventories)],
                         heroes=[h if i == seat else [] for i, h in enumerate(ev.heroes)],
                         chapter_decks=[[], []])
    if isinstance(ev, CardsDrawn) and ev.seat != seat:
        return CardsDrawn(seat=ev.seat, cards=[], count=ev.count, reason=ev.reason)
    if isinstance(ev, DeckReshuffled):
        return DeckReshuffled(deck=[], count=ev.count)
    if isinstance(ev, ChapterDecksShuffled):
        return ChapterDecksShuffled(deck=ev.deck, order=[], count=ev.count)
    if isinstance(ev, CardsStolen) and seat not in (ev.thief, ev.victim):
        return CardsStolen(thief=ev.thief, victim=ev.victim, cards=[], count=ev.count, source=ev.source, reason=ev.reason)
    if isinstance(ev, Revealed) and ev.key.startswith("organize"):
        return Revealed(key=ev.key, choices=[c if c.seat == seat else type(c)(key=c.key, seat=c.seat) for c in ev.choices])
    return ev
