"""The 10 signposts, carried out in the Day phase top to bottom (rulebook "Signposts").

Each handler takes the :class:`~services.games.orange_quest.flow.Flow`; the ones that need
choices set a waiting phase (Fog of Generosity, Chaos: simultaneous secret choices; Treasure:
the givers hand out their cards) and the rules resume the day once they are made.
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.orange_quest import SignpostApplied, TreasureStarted
from services.games.orange_quest.flow import Flow
from services.games.orange_quest.state import left, order_from, right


def rage(f: Flow) -> None:
    """The first player flips the coin: heads +20, tails +40 to the boss's health."""
    heads = f.coin(f.s.first, "rage")
    f.emit(SignpostApplied(signpost="rage", value=20 if heads else 40))


def fair(f: Flow) -> None:
    """Each player, clockwise from the first player, takes 2 cards."""
    f.emit(SignpostApplied(signpost="fair"))
    for seat in order_from(f.s, f.s.first):
        f.draw(seat, 2, "fair")


def fog_of_generosity(f: Flow) -> None:
    """The coin sets the direction (heads right, tails left); then everyone with a card chooses one
    in secret, all passed together (a simultaneous secret choice)."""
    heads = f.coin(f.s.first, "fog_of_generosity")
    if not any(f.s.hands):
        f.emit(SignpostApplied(signpost="fog_of_generosity", value=0))
        return
    f.emit(SignpostApplied(signpost="fog_of_generosity", value=-1 if heads else 1))


def flag(name: str) -> Callable[[Flow], None]:
    def apply(f: Flow) -> None:
        f.emit(SignpostApplied(signpost=name))
    apply.__doc__ = f"{name}: in force until the end of the day."
    return apply


def loss_of_losses(f: Flow) -> None:
    """The coin names the neighbour (heads right, tails left) who picks, at random, one card of
    each player's hand for the discard pile (ruling: the pick is the chance source's)."""
    heads = f.coin(f.s.first, "loss_of_losses")
    f.emit(SignpostApplied(signpost="loss_of_losses", value=-1 if heads else 1))
    for seat in order_from(f.s, f.s.first):
        f.discard_random(seat, 1, "loss_of_losses")


def treasure(f: Flow) -> None:
    """The richest (most candies) take as many cards as there are players and hand them out to
    the others; tied richest: dealt one at a time among them from the first player (ruling); nobody
    richer than the rest: one card each at random. With the deck and the discard pile both empty
    nothing is set aside and the day goes on (a Treasure waiting for givers without cards waited
    for nobody: the game stalled)."""
    s = f.s
    f.emit(SignpostApplied(signpost="treasure"))
    counts = [len(x) for x in s.stashes]
    top = max(counts)
    givers = [i for i in order_from(s, s.first) if counts[i] == top]
    if top == 0 or len(givers) == s.seats:
        for seat in order_from(s, s.first):
            f.draw(seat, 1, "treasure")
        return
    taken = [f.take_deck(1, f"aside:{givers[i % len(givers)]}", "treasure") for i in range(s.seats)]
    if any(taken):  # with the deck and the discard pile both empty there is nothing to hand out: no wait
        f.emit(TreasureStarted(givers=givers))


def chaos(f: Flow) -> None:
    """Everyone puts 2 cards of their choice (all, if fewer) face down in the centre, in secret;
    then the pile is shuffled and dealt one at a time from the first player (rules.py)."""
    if not any(f.s.hands):
        return
    f.emit(SignpostApplied(signpost="chaos"))


def candy_madness(f: Flow) -> None:
    """From the first player, each compares candies with the neighbour the coin names (heads
    right, tails left); whoever has fewer receives 2, both on equal."""
    for seat in order_from(f.s, f.s.first):
        heads = f.coin(seat, "candy_madness")
        other = right(f.s, seat) if heads else left(f.s, seat)
        a, b = len(f.s.stashes[seat]), len(f.s.stashes[other])
        f.emit(SignpostApplied(signpost="candy_madness", value=other))
        for who in ([seat] if a < b else [other] if b < a else [seat, other]):
            f.gain(who, 2, "candy_madness")


SIGNPOSTS: dict[str, Callable[[Flow], None]] = {
    "rage": rage, "fair": fair, "fog_of_generosity": fog_of_generosity, "sacred_place": flag("sacred_place"),
    "loss_of_losses": loss_of_losses, "breakage": flag("breakage"), "powerlessness": flag("powerlessness"),
    "treasure": treasure, "chaos": chaos, "candy_madness": candy_madness,
}
