"""A tiny test-only title ("toy race") exercising the core: turns, a secret card per seat, dice.

Not shipped: registered only when tests import it (or via QUESTHALL_EXTRA_TITLES=tests.toygame).
Rules: each seat is dealt one secret card 1..10 at setup; seats take turns; ``add n`` (1..3)
adds n to the total, ``roll`` adds a d3; the seat that brings the total to ``target`` or more
wins. ``peek`` is refused with ``no_peeking`` (a rule rejection example).
"""

from __future__ import annotations

import msgspec

from schemas.base import Command, Event, Options, Record
from schemas.envelope import Result
from services.kernel import Rejection, Title, register


class ToyOptions(Options):
    target: int = 10


class Add(Command, tag="toy.add"):
    n: int


class Roll(Command, tag="toy.roll"):
    pass


class CardsDealt(Event, tag="toy.cards_dealt"):
    cards: list[int]
    """Secret card per seat; redacted to -1 for the other seats."""


class Added(Event, tag="toy.added"):
    seat: int
    n: int
    total: int


class Rolled(Event, tag="toy.rolled"):
    seat: int
    die: int
    total: int


class ToyState(Record):
    seats: int
    target: int
    total: int = 0
    turn: int = 0
    cards: tuple[int, ...] = ()
    winner: int | None = None


class ToyView(Record):
    total: int
    turn: int
    target: int
    my_card: int | None
    winner: int | None


class Toy(Title[ToyState]):
    name = "toy"
    display_name = "Toy Race"
    rules_version = "1"
    min_seats = 1
    max_seats = 4
    options_type = ToyOptions
    state_type = ToyState
    view_type = ToyView
    command_types = (Add, Roll)
    event_types = (CardsDealt, Added, Rolled)

    def check_options(self, options: ToyOptions, seats: int) -> None:
        if not 1 <= options.target <= 1000:
            raise Rejection("bad_options", "target must be 1 to 1000.")

    def initial_state(self, options: ToyOptions, seats: int) -> ToyState:
        return ToyState(seats=seats, target=options.target)

    def setup(self, options: ToyOptions, seats: int, chance) -> list[Event]:
        deck = chance.shuffle(list(range(1, 11)))
        return [CardsDealt(cards=deck[:seats])]

    def decide(self, state: ToyState, seat: int, command: Command, chance) -> list[Event]:
        if seat != state.turn:
            raise Rejection("not_your_turn", f"It is seat {state.turn}'s turn.")
        if isinstance(command, Add):
            if not 1 <= command.n <= 3:
                raise Rejection("bad_amount", "You may add 1, 2 or 3.")
            return [Added(seat=seat, n=command.n, total=state.total + command.n)]
        if isinstance(command, Roll):
            d = chance.die(3)
            return [Rolled(seat=seat, die=d, total=state.total + d)]
        raise Rejection("unknown_command", "Toy knows add and roll.")

    def evolve(self, state: ToyState, event: Event) -> ToyState:
        rep = msgspec.structs.replace
        if isinstance(event, CardsDealt):
            return rep(state, cards=tuple(event.cards))
        if isinstance(event, (Added, Rolled)):
            won = event.total >= state.target
            return rep(state, total=event.total, turn=(state.turn + 1) % state.seats,
                       winner=event.seat if won else state.winner)
        return state

    def view(self, state: ToyState, seat: int | None) -> ToyView:
        mine = state.cards[seat] if seat is not None and seat < len(state.cards) else None
        return ToyView(total=state.total, turn=state.turn, target=state.target, my_card=mine, winner=state.winner)

    def redact(self, event: Event, seat: int | None) -> Event | None:
        if isinstance(event, CardsDealt):
            return CardsDealt(cards=[c if i == seat else -1 for i, c in enumerate(event.cards)])
        return event

    def legal_commands(self, state: ToyState, seat: int) -> list[Command]:
        if state.winner is not None or seat != state.turn:
            return []
        return [Add(n=1), Add(n=2), Add(n=3), Roll()]

    def status(self, state: ToyState) -> Result | None:
        if state.winner is None:
            return None
        return Result(winners=[state.winner], summary=f"Seat {state.winner} reached {state.total}.")

    def to_move(self, state: ToyState) -> list[int]:
        return [] if state.winner is not None else [state.turn]


def _random_bot(view: ToyView, seat: int, rng) -> Command:
    return rng.choice([Add(n=1), Add(n=2), Add(n=3), Roll()])


def _upcast_bumped(body: dict) -> dict:
    """``toy.bumped`` (rules version 0: ``{seat, amount, total}``) became ``toy.added`` ``{seat, n, total}``."""
    return {"type": "toy.added", "seat": body["seat"], "n": body["amount"], "total": body["total"]}


def _upcast_rolled(body: dict) -> dict:
    """``toy.rolled`` of rules version 0 called the die ``dice``; a current body is returned unchanged."""
    if "dice" in body:
        body = {**{k: v for k, v in body.items() if k != "dice"}, "die": body["dice"]}
    return body


Toy.bots = {"random": _random_bot}
Toy.upcasters = {"toy.bumped": _upcast_bumped, "toy.rolled": _upcast_rolled}
TOY = register(Toy())
