"""Questeros rules: state, setup, decide, evolve, legal commands, status.

Source: rulebooks/questeros.txt (Multi-Player Game Setup, Gameplay, Card Play Rules, Gods,
Round Scoring) and RULINGS.md "Questeros". New rulings taken here are listed in
docs/games/questeros.md ("Rulings taken by this implementation").

Setup draws, in order: ``randbelow(seats)`` (the first dealer), then ``shuffle`` of the 74
cards in canonical order (deck.toml order without the Epics 10-15). Dealing: seat ``i`` gets
the shuffled cards ``[10*i, 10*i+10)``; the rest, in shuffled order, is the deck. Every later
round draws one ``shuffle`` of all its cards in canonical order, dealt the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from schemas.base import Event, Record
from schemas.envelope import Result
from schemas.questeros import (
    Bid,
    BidMade,
    CardPlayed,
    DealerChosen,
    EpicAdded,
    HandLookedAt,
    HandsDealt,
    LookAtHand,
    PlayCard,
    QuestWon,
    RoundScored,
)
from services.games.questeros import abilities
from services.games.questeros.content import DECK_FILE, SET_ASIDE, load_deck
from services.kernel import Rejection

CARDS, ORDER = load_deck(DECK_FILE, abilities.KNOWN)
INDEX = {c: i for i, c in enumerate(ORDER)}
HAND_SIZE = 10
ROUNDS = 7
START_XP = 2
EXACT_BONUS = 5
QUESTEROS_BONUS = 10
GODS = frozenset(c for c, card in CARDS.items() if card.kind == "god")


class Play(Record):
    seat: int
    card: str
    paid_xp: bool = False
    ability: str = ""


class Done(Record):
    """The last finished turn: its plays and winner (None: both Gods)."""

    round: int
    turn: int
    plays: tuple[Play, ...]
    winner: int | None


class Look(Record):
    target: int | None
    cards: tuple[str, ...]
    round: int
    turn: int


class Line(Record):
    round: int
    bids: tuple[int, ...]
    quests: tuple[int, ...]
    gains: tuple[int, ...]
    xp: tuple[int, ...]
    questeros: int | None
    paid: tuple[int, ...] = ()


class QState(Record):
    """The whole rules state. Hands, deck and won piles are secret (see views.py)."""

    seats: int
    alt_god: bool = False
    phase: str = "setup"
    """``setup``, ``bidding``, ``playing``, ``mentor`` (a Mentor look pending), ``over``."""
    round: int = 0
    turn: int = 0
    dealer: int = 0
    initiative: int = 0
    leader: int = 0
    to_play: int | None = None
    bidder: int | None = None
    mentor: int | None = None
    xp: tuple[int, ...] = ()
    bids: tuple[int | None, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    deck: tuple[str, ...] = ()
    set_aside: tuple[str, ...] = ()
    table: tuple[Play, ...] = ()
    won: tuple[tuple[str, ...], ...] = ()
    quests: tuple[int, ...] = ()
    discarded: tuple[str, ...] = ()
    looks: tuple[Look | None, ...] = ()
    history: tuple[Line, ...] = ()
    paid: tuple[int, ...] = ()
    """XP paid per seat this round (Follow rule payments)."""
    last: Done | None = None
    """The last finished turn, until the next turn's first card."""


def initial_state(seats: int, alt_god: bool = False) -> QState:
    """The state before setup: ``seats`` players with 2 XP each (rulebook: setup)."""
    return QState(seats=seats, alt_god=alt_god, xp=(START_XP,) * seats, bids=(None,) * seats,
                  hands=((),) * seats, won=((),) * seats, quests=(0,) * seats, looks=(None,) * seats)


def canonical(cards: Sequence[str]) -> list[str]:
    """``cards`` sorted in deck.toml order."""
    return sorted(cards, key=INDEX.__getitem__)


def _deal(round_no: int, dealer: int, cards: Sequence[str], seats: int, chance) -> HandsDealt:
    shuffled = chance.shuffle(canonical(cards))
    hands = [canonical(shuffled[HAND_SIZE * i:HAND_SIZE * (i + 1)]) for i in range(seats)]
    deck = shuffled[HAND_SIZE * seats:]
    return HandsDealt(round=round_no, dealer=dealer, hands=hands, deck=deck, deck_count=len(deck))


def setup(seats: int, chance) -> list[Event]:
    """Draw the first dealer, set aside Epics 10-15, shuffle and deal round 1 (rulebook: setup)."""
    dealer = chance.randbelow(seats)
    cards = [c for c in ORDER if c not in SET_ASIDE]
    return [DealerChosen(dealer=dealer, set_aside=list(SET_ASIDE)), _deal(1, dealer, cards, seats, chance)]


# ---------------------------------------------------------------------------------------------
# The follow rule


def preferred(state: QState) -> str | None:
    """The Preferred Class of the turn: the lead's Class, ``epic`` if an Epic led, None if no
    card led yet or a God led (RULINGS.md: a God led sets no Preferred Class)."""
    if not state.table:
        return None
    lead = CARDS[state.table[0].card]
    return None if lead.kind == "god" else lead.suit


def check_play(state: QState, seat: int, card: str, pay_xp: bool) -> None:
    """Raise Rejection unless ``seat`` may play ``card`` now with this payment choice.

    A God is neither a Class nor an Epic card: it never counts as holding the Preferred Class,
    1 XP never buys it over a Class led, and with Epics preferred 1 XP buys it like any other
    non-Epic card; a player void in the Preferred Class plays anything, a God included.
    Codes: ``mentor_choice_pending``, ``not_playing_phase``, ``not_your_turn``, ``card_not_in_hand``, ``not_enough_xp``,
    ``must_follow_preferred_class``, ``god_cannot_be_bought``, ``payment_not_needed``.
    Source: rulebook "Card Play Rules", "Gods", "General Notes" ("This option applies only to
    Epic Cards"); RULINGS.md "Questeros" (Gods).
    """
    if state.phase == "mentor":
        raise Rejection("mentor_choice_pending", f"Seat {state.mentor} must first choose whose hand the Mentor looks at.")
    if state.phase != "playing":
        raise Rejection("not_playing_phase", "Cards are played only after every player has bid.")
    if seat != state.to_play:
        raise Rejection("not_your_turn", f"It is seat {state.to_play}'s turn to play.")
    hand = state.hands[seat]
    if card not in CARDS:
        raise Rejection("unknown_card", f"There is no card {card!r} in Questeros.")
    if card not in hand:
        raise Rejection("card_not_in_hand", f"{card!r} is not in your hand.")
    pref = preferred(state)
    god_out = any(p.card in GODS for p in state.table)
    free = pref is None or god_out or not any(CARDS[c].suit == pref for c in hand)
    suit = CARDS[card].suit
    if free or suit == pref:
        if pay_xp:
            raise Rejection("payment_not_needed", "This card may be played without paying XP; send pay_xp = false.")
        return
    # Holding the Preferred Class and not following it: 1 XP buys an Epic over a Class led, or
    # any other card (a God included) when Epics are preferred.
    if pref != "epic" and suit == "god":
        raise Rejection("god_cannot_be_bought" if pay_xp else "must_follow_preferred_class",
                        f"You hold {pref}: play {pref}; 1 XP buys an Epic instead, never a God.")
    if pref != "epic" and suit != "epic":
        raise Rejection("must_follow_preferred_class", f"You hold {pref}: play {pref} (or pay 1 XP to play an Epic).")
    if not pay_xp:
        what = "an Epic" if pref != "epic" else "a card that is not an Epic"
        raise Rejection("must_follow_preferred_class",
                        f"You hold {pref}: follow it, or send pay_xp = true to pay 1 XP for {what}.")
    if state.xp[seat] < 1:
        raise Rejection("not_enough_xp", "Playing outside the Preferred Class costs 1 XP and you have none.")


def turn_winner(state: QState, table: Sequence[Play]) -> int | None:
    """Who wins the turn on ``table``: a single God; else the highest Epic; else the highest
    card of the Preferred Class. None when both Gods were played (rulebook "Gods")."""
    gods = [p for p in table if p.card in GODS]
    if len(gods) >= 2:
        return None
    if gods:
        return gods[0].seat
    epics = [p for p in table if CARDS[p.card].kind == "epic"]
    if epics:
        return max(epics, key=lambda p: CARDS[p.card].value).seat
    pref = CARDS[table[0].card].suit
    return max((p for p in table if CARDS[p.card].suit == pref), key=lambda p: CARDS[p.card].value).seat


# ---------------------------------------------------------------------------------------------
# decide


def decide(state: QState, seat: int, cmd, chance) -> list[Event]:
    """Events for ``cmd`` by ``seat``. Raises Rejection (codes in docs/games/questeros.md)."""
    if state.phase == "over":
        raise Rejection("game_over", "The game is over.")
    if isinstance(cmd, Bid):
        if state.phase == "mentor":
            raise Rejection("mentor_choice_pending", f"Seat {state.mentor} must first choose whose hand the Mentor looks at.")
        if state.phase != "bidding":
            raise Rejection("not_bidding_phase", "Bids are made only at the start of a round.")
        if seat != state.bidder:
            raise Rejection("not_your_turn", f"It is seat {state.bidder}'s turn to bid.")
        n = len(state.hands[seat])
        if not 1 <= cmd.quests <= n:
            raise Rejection("bid_out_of_range", f"A bid is 1 to {n} Quests.")
        return [BidMade(seat=seat, quests=cmd.quests)]
    if isinstance(cmd, PlayCard):
        check_play(state, seat, cmd.card, cmd.pay_xp)
        god_out = any(p.card in GODS for p in state.table)
        ability = CARDS[cmd.card].on_play
        if ability and state.alt_god and god_out:
            ability = ""  # Alternative Rule: a God negates abilities of cards played after it.
        ev = CardPlayed(seat=seat, card=cmd.card, paid_xp=cmd.pay_xp, ability=ability)
        return [ev, *_after_play(state, [ev], chance)]
    if isinstance(cmd, LookAtHand):
        if state.phase != "mentor":
            raise Rejection("no_mentor_choice", "Nobody has a Mentor look to choose now.")
        if seat != state.mentor:
            raise Rejection("not_your_turn", f"Seat {state.mentor} chooses the Mentor's look.")
        if cmd.target is not None and (not 0 <= cmd.target < state.seats or cmd.target == seat):
            raise Rejection("bad_mentor_target", "The Mentor looks at another player's hand (a seat of this game, not yours).")
        cards = canonical(state.hands[cmd.target]) if cmd.target is not None else []
        ev = HandLookedAt(seat=seat, target=cmd.target, cards=cards)
        return [ev, *_after_play(state, [ev], chance)]
    raise Rejection("unknown_command", "Questeros knows bid, play_card and look_at_hand.")


def _after_play(state: QState, so_far: list[Event], chance) -> list[Event]:
    """End the turn (and the round, and the game) if the events so far complete it."""
    s = state
    for ev in so_far:
        s = evolve(s, ev)
    if s.phase != "playing" or len(s.table) < s.seats:
        return []
    out: list[Event] = []
    god_out = any(p.card in GODS for p in s.table)
    if not (s.alt_god and god_out):
        for p in s.table:
            hook = CARDS[p.card].end_of_turn
            if hook:
                out += abilities.END_OF_TURN[hook](s, p.seat)
    win = QuestWon(turn=s.turn, winner=turn_winner(s, s.table), cards=[p.card for p in s.table])
    out.append(win)
    s = evolve(s, win)
    if any(s.hands):
        return out
    return out + _end_round(s, chance)


def _end_round(s: QState, chance) -> list[Event]:
    """Round Scoring, then (rounds 1-6) add a set-aside Epic, reshuffle and deal."""
    zero = [i for i in range(s.seats) if s.quests[i] == 0]
    single = zero[0] if len(zero) == 1 else None
    gains = [s.quests[i] + (EXACT_BONUS if s.quests[i] == s.bids[i] else 0)
             + (QUESTEROS_BONUS if i == single else 0) for i in range(s.seats)]
    initiative = single if single is not None else s.initiative
    scored = RoundScored(round=s.round, quests=list(s.quests), gains=gains,
                         xp=[x + g for x, g in zip(s.xp, gains, strict=True)],
                         questeros=single, initiative=initiative)
    out: list[Event] = [scored]
    if s.round >= ROUNDS:
        return out
    s = evolve(s, scored)
    if s.set_aside:
        add = EpicAdded(card=s.set_aside[0])
        out.append(add)
        s = evolve(s, add)
    cards = [c for pile in s.won for c in pile] + list(s.discarded) + list(s.deck)
    out.append(_deal(s.round + 1, initiative, cards, s.seats, chance))
    return out


# ---------------------------------------------------------------------------------------------
# evolve


def _set(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


def evolve(s: QState, ev: Event) -> QState:
    """Fold one event. Pure and total: only sets fields, never validates."""
    rep = msgspec.structs.replace
    n = s.seats
    if isinstance(ev, DealerChosen):
        return rep(s, dealer=ev.dealer, initiative=ev.dealer, leader=ev.dealer, set_aside=tuple(ev.set_aside))
    if isinstance(ev, HandsDealt):
        return rep(s, round=ev.round, turn=1, dealer=ev.dealer, initiative=ev.dealer, leader=ev.dealer,
                   phase="bidding", bidder=(ev.dealer + 1) % n, to_play=None, mentor=None,
                   hands=tuple(tuple(h) for h in ev.hands), deck=tuple(ev.deck), table=(),
                   won=((),) * n, quests=(0,) * n, discarded=(), bids=(None,) * n, looks=(None,) * n, paid=(0,) * n,
                   last=None)
    if isinstance(ev, BidMade):
        bids = _set(s.bids, ev.seat, ev.quests)
        if all(b is not None for b in bids):
            return rep(s, bids=bids, bidder=None, phase="playing", to_play=s.leader)
        return rep(s, bids=bids, bidder=(ev.seat + 1) % n)
    if isinstance(ev, CardPlayed):
        hand = tuple(c for c in s.hands[ev.seat] if c != ev.card)
        table = s.table + (Play(seat=ev.seat, card=ev.card, paid_xp=ev.paid_xp, ability=ev.ability),)
        xp = _set(s.xp, ev.seat, s.xp[ev.seat] - 1) if ev.paid_xp else s.xp
        paid = s.paid or (0,) * n
        if ev.paid_xp:
            paid = _set(paid, ev.seat, paid[ev.seat] + 1)
        s = rep(s, paid=paid, last=None if not s.table else s.last)
        nxt = (ev.seat + 1) % n if len(table) < n else None
        phase, mentor = ("mentor", ev.seat) if ev.ability == "mentor_look" else (s.phase, s.mentor)
        return rep(s, hands=_set(s.hands, ev.seat, hand), table=table, xp=xp, to_play=nxt, phase=phase, mentor=mentor)
    if isinstance(ev, HandLookedAt):
        look = Look(target=ev.target, cards=tuple(ev.cards), round=s.round, turn=s.turn)
        return rep(s, phase="playing", mentor=None, looks=_set(s.looks, ev.seat, look))
    if isinstance(ev, QuestWon):
        if ev.winner is None:
            lead, won, quests, disc = s.leader, s.won, s.quests, s.discarded + tuple(ev.cards)
        else:
            lead, disc = ev.winner, s.discarded
            won = _set(s.won, ev.winner, s.won[ev.winner] + tuple(ev.cards))
            quests = _set(s.quests, ev.winner, s.quests[ev.winner] + 1)
        more = any(s.hands)
        s = rep(s, last=Done(round=s.round, turn=s.turn, plays=s.table, winner=ev.winner))
        return rep(s, table=(), won=won, quests=quests, discarded=disc, initiative=lead, leader=lead,
                   turn=s.turn + 1 if more else s.turn, to_play=lead if more else None)
    if isinstance(ev, RoundScored):
        line = Line(round=ev.round, bids=tuple(b or 0 for b in s.bids), quests=tuple(ev.quests),
                    gains=tuple(ev.gains), xp=tuple(ev.xp), questeros=ev.questeros, paid=s.paid or (0,) * n)
        return rep(s, xp=tuple(ev.xp), initiative=ev.initiative, history=s.history + (line,),
                   phase="over" if ev.round >= ROUNDS else "scored", to_play=None)
    if isinstance(ev, EpicAdded):
        return rep(s, set_aside=tuple(c for c in s.set_aside if c != ev.card), deck=s.deck + (ev.card,))
    return s


# ---------------------------------------------------------------------------------------------
# Queries


def legal_commands(state: QState, seat: int) -> list:
    """Every command ``decide`` accepts from ``seat`` now (bids, plays with/without payment,
    Mentor targets)."""
    if state.phase == "bidding" and seat == state.bidder:
        return [Bid(quests=k) for k in range(1, len(state.hands[seat]) + 1)]
    if state.phase == "mentor" and seat == state.mentor:
        return [LookAtHand(target=t) for t in range(state.seats) if t != seat] + [LookAtHand(target=None)]
    if state.phase == "playing" and seat == state.to_play:
        out = []
        for c in canonical(state.hands[seat]):
            for pay in (False, True):
                try:
                    check_play(state, seat, c, pay)
                except Rejection:
                    continue
                out.append(PlayCard(card=c, pay_xp=pay))
        return out
    return []


def default_move(state: QState, seat: int):
    """What a timeout plays for ``seat`` (house rule, issue 14): the lowest legal card (by value,
    Gods last, without paying XP when it can), the lowest bid (1), or the Mentor declines."""
    legal = legal_commands(state, seat)
    if not legal:
        return None
    if isinstance(legal[0], PlayCard):
        return min(legal, key=lambda c: (CARDS[c.card].kind == "god", CARDS[c.card].value, c.pay_xp, INDEX[c.card]))
    if isinstance(legal[0], LookAtHand):
        return LookAtHand(target=None)
    return min(legal, key=lambda c: c.quests)


def to_move(state: QState) -> list[int]:
    """Seats the game waits for."""
    if state.phase == "bidding":
        return [state.bidder]  # type: ignore[list-item]
    if state.phase == "mentor":
        return [state.mentor]  # type: ignore[list-item]
    if state.phase == "playing" and state.to_play is not None:
        return [state.to_play]
    return []


def status(state: QState) -> Result | None:
    """The result after round 7: most XP; tie: most Quests in round 7; still tied: shared win
    (rulebook "Objective"; RULINGS.md shared win)."""
    if state.phase != "over":
        return None
    best = max(state.xp)
    top = [i for i in range(state.seats) if state.xp[i] == best]
    last = state.history[-1].quests
    most = max(last[i] for i in top)
    winners = [i for i in top if last[i] == most]
    if len(winners) == 1:
        why = f"Seat {winners[0]} wins with {best} XP"
        if len(top) > 1:
            why += f" (tie broken by {most} Quests in round {ROUNDS})"
    else:
        why = f"Seats {winners} share the win with {best} XP and {most} Quests in round {ROUNDS}"
    return Result(winners=winners, scores=[float(x) for x in state.xp], summary=why + ".")
