"""Orange Quest state, zones and the queries every other module shares (pure).

Secret parts of :class:`QState`: every ``hands`` entry (its owner only), every ``stashes`` entry
and ``gift.cards`` (nobody, the owner included: rulebook "Candy"), ``asides`` (the owner only),
``centre`` (Chaos, face down), the ``deck``, ``locations`` and ``bosses`` order; views.py removes them.
Card conservation: ``deck + discard + table + centre`` and every hand, stash, equipment, curse
and aside hold the whole pack of 102 cards at every moment (:func:`all_cards`).
"""

from __future__ import annotations

from schemas.base import Record

HAND_LIMIT = 7
WAIT_PHASES = frozenset({"fog", "chaos", "treasure", "fight", "share", "others", "party", "duel", "gift", "over"})
"""Phases in which the game waits for input (the driver stops); ``""`` while steps run."""


class Link(Record):
    """One card of a response window's chain (bottom first)."""

    seat: int
    card: str
    target: int | None = None
    item: str | None = None


class Window(Record):
    """An open response window: the chain and the seats that passed since the chain last grew."""

    id: int
    chain: tuple[Link, ...]
    passed: tuple[int, ...] = ()


class Combat(Record):
    """A boss fight (``kind`` ``fight``) or a duel (``duel``: ``seats`` = challenger, challenged).

    ``dealt``/``reduced``/``spent`` are per game seat: gross damage, reductions on it, combat
    cards spent (duel refills); ``helpers``: (helper, duellist) pairs of a duel, ascending, one
    for each player whose combat card counted for a duellist (RULINGS.md duels)."""

    kind: str
    seats: tuple[int, ...]
    turn: int
    dealt: tuple[int, ...]
    reduced: tuple[int, ...]
    spent: tuple[int, ...]
    passes: int = 0
    played: bool = False
    boss: str = ""
    health: int = 0
    helpers: tuple[tuple[int, int], ...] = ()


class Gift(Record):
    """After a duel: its ``winner`` may give ``helpers`` the won candies still in its stash
    (``cards``: secret, like every stash card; RULINGS.md duels)."""

    winner: int
    helpers: tuple[int, ...]
    cards: tuple[str, ...]
    given: int = 0


class Share(Record):
    """A reward shared on the table: participants' (``variant``) or others' (``distributor``)."""

    variant: str
    seats: tuple[int, ...]
    stage: int = 1
    undecided: int = 0
    proposal: tuple[int, ...] = ()
    proposer: int | None = None
    accepted: tuple[int, ...] = ()
    distributor: int | None = None


class QState(Record):
    """The whole rules state."""

    seats: int
    days: int = 6
    sharing: str = "peaceable"
    window_seconds: int = 30
    agree_seconds: int = 30
    half_health: bool = True
    strengthening: str = ""
    phase: str = "setup"
    agenda: tuple[str, ...] = ()
    """The steps still to run today (the driver pops them; LocationRevealed inserts the signposts)."""
    day: int = 0
    first: int = 0
    heroes: tuple[str, ...] = ()
    hero_turned: tuple[bool, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    stashes: tuple[tuple[str, ...], ...] = ()
    equipment: tuple[tuple[str, ...], ...] = ()
    used: tuple[str, ...] = ()
    """Equipment cards used today."""
    curses: tuple[tuple[str, ...], ...] = ()
    asides: tuple[tuple[str, ...], ...] = ()
    deck: tuple[str, ...] = ()
    """Action deck, top first."""
    discard: tuple[str, ...] = ()
    table: tuple[str, ...] = ()
    """Face up in the middle: the chain's cards, combat cards of a fight or duel, a reward pool."""
    centre: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()
    location: str | None = None
    bosses: tuple[str, ...] = ()
    boss: str | None = None
    trophies: tuple[tuple[str, ...], ...] = ()
    rage: int = 0
    sacred_place: bool = False
    breakage: bool = False
    powerlessness: bool = False
    direction: int = 1
    """Fog of Generosity: +1 to the left neighbour (clockwise), -1 to the right."""
    window: Window | None = None
    windows: int = 0
    combat: Combat | None = None
    turn: int = 0
    """The party's turn."""
    passes: int = 0
    played: bool = False
    duels_started: tuple[int, ...] = ()
    attacked: tuple[int, ...] = ()
    gift: Gift | None = None
    """After a duel won with help: the winner's chance to give helpers candies (phase ``gift``)."""
    leader: int | None = None
    """The last fight's leader (None: none, or a tie)."""
    participants: tuple[int, ...] = ()
    others: tuple[int, ...] = ()
    distributor: int | None = None
    share: Share | None = None
    shares: int = 0
    givers: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()


def order_from(s: QState, seat: int) -> list[int]:
    """Every seat clockwise (to the left) from ``seat``."""
    return [(seat + i) % s.seats for i in range(s.seats)]


def left(s: QState, seat: int) -> int:
    """The neighbour on the left: the next seat clockwise (rulebook "Night: Party")."""
    return (seat + 1) % s.seats


def right(s: QState, seat: int) -> int:
    return (seat - 1) % s.seats


def convert_seats(s: QState) -> list[int]:
    """Seats holding more than 7 cards: they convert before anything else (rulebook "Game Setup")."""
    if s.phase in ("setup", "over"):
        return []
    return [i for i in range(s.seats) if len(s.hands[i]) > HAND_LIMIT]


def waiting(s: QState) -> bool:
    """Whether the game waits for input (the driver stops)."""
    return s.phase in WAIT_PHASES or s.window is not None or bool(convert_seats(s))


def responders(s: QState) -> list[int]:
    """Seats the open window still waits for: everyone but the top card's player, not passed."""
    w = s.window
    if w is None:
        return []
    top = w.chain[-1].seat
    return [i for i in order_from(s, top) if i != top and i not in w.passed]


def net(c: Combat, seat: int) -> int:
    """Net damage: never below zero (rulebook "Action Cards": not reduced by more than dealt)."""
    return max(0, c.dealt[seat] - c.reduced[seat])


def hero_ready(s: QState, seat: int) -> bool:
    """The hero card is not turned and Powerlessness is not in force."""
    return not s.hero_turned[seat] and not s.powerlessness


def all_cards(s: QState) -> list[str]:
    """Every action card wherever it is (the conservation property)."""
    out = [*s.deck, *s.discard, *s.table, *s.centre]
    for zone in (s.hands, s.stashes, s.equipment, s.curses, s.asides):
        for cards in zone:
            out += cards
    return out
