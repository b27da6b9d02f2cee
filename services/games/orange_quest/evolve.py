"""Orange Quest evolve: fold one event into the state (pure, total, never raises, only sets fields).

Source: docs/writing-a-title.md "Rules of the road"; the events in schemas/orange_quest.py.
"""

from __future__ import annotations

import msgspec

from schemas.base import Event
from schemas.orange_quest import (
    AbilityUsed,
    BossRevealed,
    CandiesGiven,
    CandiesKept,
    CardPlayed,
    ChainResolved,
    DayStarted,
    DuelEnded,
    DuelStarted,
    EquipmentUsed,
    FightEnded,
    GameEnded,
    GameSetUp,
    GivingClosed,
    GivingOpened,
    HeroTurned,
    LocationRevealed,
    Modified,
    Moved,
    OthersReward,
    PartyEnded,
    PartyStarted,
    Passed,
    ProposalAccepted,
    Proposed,
    Reshuffled,
    SharingStarted,
    SignpostApplied,
    Stage,
    TreasureStarted,
    TrophyTaken,
    TurnStarted,
)
from services.games.orange_quest.content import CARDS
from services.games.orange_quest.state import Combat, Gift, Link, QState, Share, Window
from services.kernel.tuples import put, without

rep = msgspec.structs.replace
DAY = ("morning", "location", "evening", "party", "day_end")
"""The steps of a game day (rulebook "Game Process"); the location's signposts follow ``location``."""
_SEATED = ("hand", "stash", "equip", "curse", "aside")
_FIELD = {"hand": "hands", "stash": "stashes", "equip": "equipment", "curse": "curses", "aside": "asides"}
_SHARED = {"deck": "deck", "discard": "discard", "table": "table", "centre": "centre"}


def _zone(s: QState, zone: str) -> tuple[str, ...]:
    kind, _, owner = zone.partition(":")
    if kind in _FIELD:
        seats = getattr(s, _FIELD[kind])
        i = int(owner) if owner.isdigit() else -1
        return seats[i] if 0 <= i < len(seats) else ()
    return getattr(s, _SHARED[kind]) if kind in _SHARED else ()


def _set_zone(s: QState, zone: str, cards: tuple[str, ...]) -> QState:
    kind, _, owner = zone.partition(":")
    if kind in _FIELD:
        seats = getattr(s, _FIELD[kind])
        i = int(owner) if owner.isdigit() else -1
        return rep(s, **{_FIELD[kind]: put(seats, i, cards)}) if 0 <= i < len(seats) else s
    return rep(s, **{_SHARED[kind]: cards}) if kind in _SHARED else s


def _move(s: QState, ev: Moved) -> QState:
    s = _set_zone(s, ev.frm, without(_zone(s, ev.frm), ev.cards))
    dest = _zone(s, ev.to)
    s = _set_zone(s, ev.to, tuple(ev.cards) + dest if ev.to == "deck" else dest + tuple(ev.cards))
    if ev.to.startswith("equip:") and s.breakage:  # Breakage: attached turned at once
        s = rep(s, used=s.used + tuple(ev.cards))
    if s.gift is not None and ev.frm == f"stash:{s.gift.winner}":  # given, or taken by a card
        s = rep(s, gift=rep(s.gift, cards=tuple(c for c in s.gift.cards if c not in ev.cards)))
    return s


def _played(s: QState, ev: CardPlayed) -> QState:
    card = CARDS.get(ev.card)
    s = rep(s, hands=put(s.hands, ev.seat, without(s.hands[ev.seat], [ev.card])), table=s.table + (ev.card,))
    if card is None:
        return s
    if card.frame == "quick":
        link = Link(seat=ev.seat, card=ev.card, target=ev.target, item=ev.item)
        if s.window is None:
            s = rep(s, windows=s.windows + 1, window=Window(id=s.windows + 1, chain=(link,)))
        else:
            s = rep(s, window=rep(s.window, chain=s.window.chain + (link,), passed=()))
    c = s.combat
    if c is not None and s.phase in ("fight", "duel"):
        if card.frame == "combat":
            spent = put(c.spent, ev.seat, c.spent[ev.seat] + 1)
            if card.effect == "damage":
                who = ev.helps if ev.helps is not None else ev.seat
                c = rep(c, dealt=put(c.dealt, who, c.dealt[who] + card.value), spent=spent)
            elif ev.target is not None and 0 <= ev.target < s.seats:
                c = rep(c, reduced=put(c.reduced, ev.target, c.reduced[ev.target] + card.value), spent=spent)
            if ev.helps is not None:
                c = rep(c, helpers=tuple(sorted({*c.helpers, (ev.seat, ev.helps)})))
        c = rep(c, passes=0, played=c.played or ev.seat == c.turn)
        s = rep(s, combat=c)
    elif s.phase == "party":
        s = rep(s, passes=0, played=s.played or ev.seat == s.turn)
    return s


def _passed(s: QState, ev: Passed) -> QState:
    if s.window is not None:
        return rep(s, window=rep(s.window, passed=tuple(sorted({*s.window.passed, ev.seat}))))
    if s.combat is not None and s.phase in ("fight", "duel"):
        c = s.combat
        return rep(s, combat=rep(c, passes=0 if c.played else c.passes + 1, played=False))
    if s.phase == "party":
        return rep(s, passes=0 if s.played else s.passes + 1, played=False)
    return s


def evolve(s: QState, ev: Event) -> QState:
    """The state after ``ev``."""
    n = s.seats
    if isinstance(ev, GameSetUp):
        empty = tuple(() for _ in range(n))
        return rep(s, heroes=tuple(ev.heroes), hero_turned=tuple(False for _ in range(n)), first=ev.first, days=ev.days,
                   deck=tuple(ev.deck), locations=tuple(ev.locations), bosses=tuple(ev.bosses),
                   strengthening=ev.strengthening, hands=empty, stashes=empty, equipment=empty, curses=empty,
                   asides=empty, trophies=empty, phase="")
    if isinstance(ev, Moved):
        return _move(s, ev)
    if isinstance(ev, Reshuffled):
        return rep(s, deck=tuple(ev.deck), discard=())
    if isinstance(ev, DayStarted):
        return rep(s, day=ev.day, first=ev.first, hero_turned=tuple(False for _ in range(n)), used=(), rage=0,
                   sacred_place=False, breakage=False, powerlessness=False, location=None, boss=None,
                   agenda=DAY, phase="", duels_started=(), attacked=(), leader=None, participants=(), others=(),
                   distributor=None, gift=None)
    if isinstance(ev, Stage):
        agenda = s.agenda[1:] if ev.step and s.agenda and s.agenda[0] == ev.step else s.agenda
        return rep(s, agenda=agenda, phase=ev.phase, share=None if not ev.phase else s.share,
                   givers=() if not ev.phase else s.givers)
    if isinstance(ev, LocationRevealed):
        return rep(s, location=ev.location, locations=s.locations[1:], agenda=tuple(ev.signposts) + s.agenda)
    if isinstance(ev, SignpostApplied):
        if ev.signpost == "rage":
            return rep(s, rage=ev.value)
        if ev.signpost in ("sacred_place", "breakage"):
            return rep(s, **{ev.signpost: True})
        if ev.signpost == "powerlessness":
            return rep(s, powerlessness=True, hero_turned=tuple(True for _ in range(n)))
        if ev.signpost == "fog_of_generosity":
            return rep(s, direction=ev.value, phase="fog") if ev.value else s
        if ev.signpost == "chaos":
            return rep(s, phase="chaos")
        return s
    if isinstance(ev, HeroTurned | AbilityUsed | CandiesKept):
        return rep(s, hero_turned=put(s.hero_turned, ev.seat, True))
    if isinstance(ev, EquipmentUsed):
        return rep(s, used=s.used + (ev.card,))
    if isinstance(ev, CardPlayed):
        return _played(s, ev)
    if isinstance(ev, Passed):
        return _passed(s, ev)
    if isinstance(ev, TurnStarted):
        if s.combat is not None and s.phase in ("fight", "duel"):
            return rep(s, combat=rep(s.combat, turn=ev.seat))
        return rep(s, turn=ev.seat)
    if isinstance(ev, ChainResolved):
        return rep(s, window=None)
    if isinstance(ev, Modified):
        c = s.combat
        if c is None or not 0 <= ev.seat < n:
            return s
        return rep(s, combat=rep(c, dealt=put(c.dealt, ev.seat, c.dealt[ev.seat] + ev.amount)))
    if isinstance(ev, BossRevealed):
        zeros = tuple(0 for _ in range(n))
        return rep(s, boss=ev.boss, bosses=s.bosses[1:], phase="fight",
                   combat=Combat(kind="fight", seats=tuple(range(n)), turn=ev.turn, dealt=zeros, reduced=zeros,
                                 spent=zeros, boss=ev.boss, health=ev.health))
    if isinstance(ev, FightEnded):
        steps = ("leader", "share", "others") if ev.won else ("boss_loss",)
        return rep(s, combat=None, phase="", agenda=steps + s.agenda, leader=ev.leader,
                   participants=tuple(ev.participants), others=tuple(ev.others), distributor=ev.distributor)
    if isinstance(ev, TrophyTaken):
        return rep(s, trophies=put(s.trophies, ev.seat, s.trophies[ev.seat] + (ev.boss,)))
    if isinstance(ev, SharingStarted):
        shares = s.shares + (1 if ev.stage == 1 else 0)
        return rep(s, phase="share", shares=shares,
                   share=Share(variant=ev.variant, seats=tuple(ev.seats), stage=ev.stage, undecided=ev.undecided))
    if isinstance(ev, OthersReward):
        return rep(s, phase="others", share=Share(variant="others", seats=tuple(ev.seats), distributor=ev.distributor))
    if isinstance(ev, TreasureStarted):
        return rep(s, phase="treasure", givers=tuple(ev.givers))
    if isinstance(ev, Proposed) and s.share is not None:
        return rep(s, share=rep(s.share, proposal=tuple(ev.to), proposer=ev.seat, accepted=(ev.seat,)))
    if isinstance(ev, ProposalAccepted) and s.share is not None:
        return rep(s, share=rep(s.share, accepted=tuple(sorted({*s.share.accepted, ev.seat}))))
    if isinstance(ev, PartyStarted):
        return rep(s, phase="party", turn=ev.turn, passes=0, played=False, duels_started=(), attacked=())
    if isinstance(ev, DuelStarted):
        zeros = tuple(0 for _ in range(n))
        return rep(s, phase="duel", played=True, duels_started=s.duels_started + (ev.challenger,),
                   attacked=s.attacked + (ev.challenged,),
                   combat=Combat(kind="duel", seats=(ev.challenger, ev.challenged), turn=ev.challenger, dealt=zeros,
                                 reduced=zeros, spent=zeros))
    if isinstance(ev, DuelEnded):
        return rep(s, combat=None, phase="party")
    if isinstance(ev, GivingOpened):
        return rep(s, phase="gift", gift=Gift(winner=ev.winner, helpers=tuple(ev.helpers), cards=tuple(ev.cards)))
    if isinstance(ev, CandiesGiven) and s.gift is not None:
        return rep(s, gift=rep(s.gift, given=s.gift.given + ev.count))
    if isinstance(ev, GivingClosed):
        return rep(s, phase="party", gift=None)
    if isinstance(ev, PartyEnded):
        return rep(s, phase="")
    if isinstance(ev, GameEnded):
        return rep(s, phase="over", scores=tuple(ev.scores), winners=tuple(ev.winners), agenda=())
    return s
