"""A tiny test-only title ("toy vote") exercising the kernel's simultaneous secret choices.

Not shipped and not registered: tests run it in memory with ``LocalGame``. Rules: each of ``rounds`` rounds, every
seat secretly picks a word (``toy_vote.pick``, 1-20 lowercase letters) and may change it until
the last seat has picked; then all picks are revealed together and the longest word scores a
point (a tie: the lowest seat). Most points after the last round wins (ties shared).
"""

from __future__ import annotations

import msgspec

from schemas.base import ChoiceMade, ChoicesRevealed, Command, Event, Options, Record
from schemas.envelope import Result
from services.kernel import Rejection, Title
from services.kernel.secret import SecretChoice


class VoteOptions(Options):
    rounds: int = 2


class Pick(Command, tag="toy_vote.pick"):
    word: str


class Shout(Command, tag="toy_vote.shout"):
    """Not a choice: always refused (a non-choice command beside the choices)."""


class Picked(ChoiceMade, tag="toy_vote.picked"):
    choice: Pick | None = None


class PicksRevealed(ChoicesRevealed, tag="toy_vote.picks_revealed"):
    choices: list[Picked] = []


class RoundWon(Event, tag="toy_vote.round_won"):
    round: int
    seat: int


class VoteState(Record):
    seats: int
    rounds: int
    round: int = 1
    scores: tuple[int, ...] = ()
    last: tuple[str, ...] = ()
    """The words revealed in the last round, by seat."""


class VoteView(Record):
    round: int
    rounds: int
    scores: list[int]
    last: list[str]


class ToyVote(Title[VoteState]):
    name = "toy_vote"
    display_name = "Toy Vote"
    rules_version = "1"
    min_seats = 1
    max_seats = 4
    options_type = VoteOptions
    state_type = VoteState
    view_type = VoteView
    command_types = (Pick, Shout)
    event_types = (Picked, PicksRevealed, RoundWon)
    choice_types = (Pick,)
    choice_made_type = Picked
    choices_revealed_type = PicksRevealed

    def initial_state(self, options: VoteOptions, seats: int) -> VoteState:
        return VoteState(seats=seats, rounds=options.rounds, scores=(0,) * seats)

    def setup(self, options: VoteOptions, seats: int, chance) -> list[Event]:
        return []

    def decide(self, state: VoteState, seat: int, command: Command, chance) -> list[Event]:
        raise Rejection("no_shouting", "Toy vote has only secret picks.")

    def secret_choice(self, state: VoteState) -> SecretChoice | None:
        if state.round > state.rounds:
            return None
        return SecretChoice(key=f"round:{state.round}", seats=tuple(range(state.seats)))

    def check_choice(self, state: VoteState, seat: int, command: Command) -> None:
        w = command.word  # type: ignore[attr-defined]
        if not (1 <= len(w) <= 20 and w.isascii() and w.isalpha() and w.islower()):
            raise Rejection("bad_word", "A word is 1 to 20 lowercase letters.")

    def resolve_choices(self, state: VoteState, choices: dict[int, Command], chance) -> list[Event]:
        best = max(sorted(choices), key=lambda s: len(choices[s].word))  # type: ignore[attr-defined]
        return [RoundWon(round=state.round, seat=best)]

    def evolve(self, state: VoteState, event: Event) -> VoteState:
        rep = msgspec.structs.replace
        if isinstance(event, PicksRevealed):
            return rep(state, last=tuple(m.choice.word if m.choice else "" for m in event.choices))
        if isinstance(event, RoundWon):
            sc = list(state.scores)
            sc[event.seat] += 1
            return rep(state, round=state.round + 1, scores=tuple(sc))
        return state

    def view(self, state: VoteState, seat: int | None) -> VoteView:
        return VoteView(round=state.round, rounds=state.rounds, scores=list(state.scores), last=list(state.last))

    def legal_commands(self, state: VoteState, seat: int) -> list[Command]:
        return [Pick(word="a"), Pick(word="bb"), Pick(word="ccc")] if state.round <= state.rounds else []

    def status(self, state: VoteState) -> Result | None:
        if state.round <= state.rounds:
            return None
        top = max(state.scores)
        return Result(winners=[s for s in range(state.seats) if state.scores[s] == top],
                      scores=[float(x) for x in state.scores])

    def to_move(self, state: VoteState) -> list[int]:
        return list(range(state.seats)) if state.round <= state.rounds else []


def _random_bot(view: VoteView, seat: int, rng) -> Command:
    return Pick(word="".join(rng.choice("abc") for _ in range(rng.randint(1, 5))))


ToyVote.bots = {"random": _random_bot}
TOY_VOTE = ToyVote()
"""Not registered (so registry-wide tests and manifests do not see it); run it with LocalGame."""
