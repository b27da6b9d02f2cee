"""What a seat or a spectator may see of Orange Quest: ``view`` and ``redact``.

Public: heroes and whether they are turned, hand and stash counts, equipment, curses, trophies,
the table (played cards, reward pools), the response window's chain, the fight or duel and its
damage, the location, the boss, counts of the decks and the discard pile, every coin flip.
Secret: other seats' hands and asides, every stash's cards and the won candies a duel's winner
may give its helpers (from everyone, the owner included: rulebook "It is not allowed to look at
which cards have become candy"), the deck, location and boss deck order, the Chaos centre, and
(kernel) every secret choice before its reveal; a Fog or Chaos choice stays private after its
reveal (the cards reach their receivers by ``moved``).
"""

from __future__ import annotations

from schemas.base import Event
from schemas.orange_quest import (
    ChainView,
    GameSetUp,
    GivingOpened,
    Moved,
    OrangeQuestView,
    PlayerView,
    Reshuffled,
    Revealed,
)
from services.games.orange_quest.content import LOCATIONS, PACK
from services.games.orange_quest.rules import gift_left, legal_commands, to_move
from services.games.orange_quest.state import QState, convert_seats, net, responders

_INDEX = {c: i for i, c in enumerate(PACK)}
_PUBLIC = frozenset({"table", "discard", "equip", "curse"})
_OWNED = frozenset({"hand", "aside"})


def _sorted(cards) -> list[str]:
    return sorted(cards, key=lambda c: _INDEX.get(c, len(_INDEX)))


def sees(zone: str, seat: int | None) -> bool:
    """Whether ``seat`` sees the cards of ``zone`` (stash, deck and centre: nobody)."""
    kind, _, owner = zone.partition(":")
    if kind in _PUBLIC:
        return True
    return kind in _OWNED and seat is not None and owner == str(seat)


def move_visible(ev: Moved, seat: int | None) -> bool:
    """A move's cards are seen by ``seat`` unless a stash is on either end (candy stays unknown)."""
    if ev.frm.startswith("stash") or ev.to.startswith("stash"):
        return False
    return sees(ev.frm, seat) or sees(ev.to, seat)


def view(s: QState, seat: int | None) -> OrangeQuestView:
    """The view of ``s`` for ``seat`` (None: spectator)."""
    mine = seat is not None and 0 <= seat < s.seats
    c = s.combat
    used = set(s.used)
    players = [PlayerView(hero=s.heroes[i], hero_turned=s.hero_turned[i], hand_count=len(s.hands[i]),
                          candies=len(s.stashes[i]), equipment=list(s.equipment[i]),
                          equipment_used=[e for e in s.equipment[i] if e in used or s.breakage],
                          curses=list(s.curses[i]), trophies=list(s.trophies[i]),
                          damage=net(c, i) if c is not None else 0)
               for i in range(s.seats)] if s.heroes else []
    sh = s.share
    turn = c.turn if c is not None else (s.turn if s.phase == "party" else None)
    waiting = mine and seat in to_move(s)
    return OrangeQuestView(
        phase=s.phase, day=s.day, days=s.days, first=s.first, turn=turn, players=players,
        deck_count=len(s.deck), discard_count=len(s.discard), table=list(s.table),
        location=s.location, signposts=list(LOCATIONS[s.location].signposts) if s.location else [],
        boss=s.boss, boss_health=c.health if c is not None and c.kind == "fight" else 0, bosses_left=len(s.bosses),
        hand=_sorted(s.hands[seat]) if mine else [], aside=list(s.asides[seat]) if mine else [],  # type: ignore[index]
        chain=[ChainView(seat=x.seat, card=x.card, target=x.target, item=x.item) for x in s.window.chain] if s.window else [],
        window_waiting=responders(s), convert=convert_seats(s),
        sharing=sh.variant if sh else "", share_seats=list(sh.seats) if sh else [],
        pool=[x for x in s.table if not s.window or x not in {y.card for y in s.window.chain}] if sh else [],
        proposal=list(sh.proposal) if sh else [], proposer=sh.proposer if sh else None,
        accepted=list(sh.accepted) if sh else [], distributor=sh.distributor if sh else None,
        duel=list(c.seats) if c is not None and c.kind == "duel" else [],
        duels_started=list(s.duels_started), attacked=list(s.attacked),
        gift_giver=s.gift.winner if s.gift else None, gift_helpers=list(s.gift.helpers) if s.gift else [],
        gift_left=gift_left(s),
        sacred_place=s.sacred_place, breakage=s.breakage, powerlessness=s.powerlessness,
        scores=list(s.scores), winners=list(s.winners),
        legal=legal_commands(s, seat) if waiting else [],  # type: ignore[arg-type]
    )


def redact(ev: Event, seat: int | None) -> Event | None:
    """``ev`` as ``seat`` may see it (secret lists emptied; counts kept)."""
    if isinstance(ev, GameSetUp):
        return GameSetUp(heroes=ev.heroes, first=ev.first, days=ev.days, deck=[], locations=[], bosses=[],
                         strengthening=ev.strengthening)
    if isinstance(ev, Moved) and not move_visible(ev, seat):
        return Moved(frm=ev.frm, to=ev.to, cards=[], count=ev.count, reason=ev.reason)
    if isinstance(ev, GivingOpened):  # the won candies: nobody sees which cards they are
        return GivingOpened(winner=ev.winner, helpers=ev.helpers, count=ev.count, cards=[])
    if isinstance(ev, Reshuffled):
        return Reshuffled(deck=[], count=ev.count)
    if isinstance(ev, Revealed) and ev.key.split(":")[0] in ("fog", "chaos"):
        return Revealed(key=ev.key, choices=[x if x.seat == seat else type(x)(key=x.key, seat=x.seat) for x in ev.choices])
    return ev
