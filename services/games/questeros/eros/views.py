"""What the player (seat 0) or a spectator may see of Ero's Quest: ``view`` and ``redact``.

Secret from everyone: the deck order (RULINGS.md "Questeros": hands and deck order are secret).
Secret from spectators: the hand, the looked-at cards and the cards drawn or chosen. Public:
the play area (Used or not), the Allies, the Discard pile, the Epic stack (face up, in order),
the Encounter texts, the piles of completed Epics, every count.
"""

from __future__ import annotations

from schemas.base import Event
from schemas.eros_quest import (
    AdventureSetUp,
    CardChosen,
    CardsDrawn,
    CardsLooked,
    CombatView,
    DiscardReturned,
    EncounterInfo,
    ErosQuestView,
    OrbUsed,
    PlayCard,
)
from services.games.questeros.eros.encounters import PACK
from services.games.questeros.eros.rules import EState, canonical, legal_commands


def view(s: EState, seat: int | None) -> ErosQuestView:
    """The view of ``s`` for ``seat`` (0: the player; None: a spectator)."""
    me = seat == 0

    def cards(t: tuple[str, ...]) -> list[PlayCard]:
        return [PlayCard(card=c, used=c in s.used) for c in t]

    nxt = PACK[s.epics[0]] if s.epics else None
    f = s.fight
    return ErosQuestView(
        turn=s.turn, phase=s.phase if s.phase != "setup" else "turn",  # type: ignore[arg-type]
        hand=canonical(s.hand) if me else [], hand_count=len(s.hand), deck_count=len(s.deck),
        discard=list(s.discard), destroyed_count=len(s.destroyed),
        blades=cards(s.blades), staves=cards(s.staves), orbs=cards(s.orbs), cups=cards(s.cups),
        allies=list(s.allies),
        next_encounter=EncounterInfo(epic=nxt.epic, name=nxt.name, text=nxt.text, source=nxt.source) if nxt else None,
        epics_left=len(s.epics), completed=list(s.completed), defeated=list(s.defeated), aside=list(s.aside),
        actions_done=list(s.actions), bonus=list(s.bonus) if me else [], looking=list(s.looking) if me else [],
        combat=CombatView(epic=f.epic, value=f.value, dealt=f.dealt, step=f.step, hit_remaining=f.remaining,  # type: ignore[arg-type]
                          round=f.round) if f is not None else None,
        won=s.won, end_reason=s.reason,
        legal=legal_commands(s, 0) if me else [],
    )


def redact(ev: Event, seat: int | None) -> Event | None:
    """``ev`` as ``seat`` may see it: the deck order never; hand cards only to the player."""
    me = seat == 0
    if isinstance(ev, AdventureSetUp):
        return AdventureSetUp(orbs=ev.orbs, hand=ev.hand if me else [], deck=[], deck_count=ev.deck_count, blades=ev.blades,
                              staves=ev.staves, used=ev.used, allies=ev.allies, completed=ev.completed)
    if isinstance(ev, DiscardReturned) and ev.shuffled:
        return DiscardReturned(cards=[], count=ev.count, shuffled=True)
    if me:
        return ev
    if isinstance(ev, OrbUsed):
        return OrbUsed(orb=ev.orb, looked=[])
    if isinstance(ev, CardsLooked):
        return CardsLooked(looked=[])
    if isinstance(ev, CardChosen):
        return CardChosen(card="", bottom=[])
    if isinstance(ev, CardsDrawn):
        return CardsDrawn(cards=[], learn=ev.learn)
    return ev
