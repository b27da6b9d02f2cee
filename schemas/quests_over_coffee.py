"""Wire contract of Quests Over Coffee: options, commands (``qoc.<verb>``), events (``qoc.<past>``), view.

Source: rulebooks/quests-over-coffee.txt; ../shared/RULINGS.md "Quests Over Coffee";
docs/games/quests_over_coffee.md (every ruling taken here). Tags are stable forever.

Dice are 1..6. Slots of the shop are 1-based (``Item 1`` .. ``Item 3`` of the Shop card).
Die indexes are 0-based into ``view.dice`` (base dice first, then bought help dice).
"""

from __future__ import annotations

from typing import Literal

from schemas.base import Command, Event, Options, Record


class QocOptions(Options):
    """Game options. ``mode``: ``solo`` (1 seat) or ``coop`` (2 seats, rulebook 2-Player Variant);
    left out (None), the seat count decides it."""

    mode: Literal["solo", "coop"] | None = None
    quest_board: bool = False
    """Quest Board Variant: 3 one-star, 4 two-star, 3 three-star quests and its own grade table."""
    environments: bool = False
    """Play with Environment cards (rulebook: optional)."""
    companions: bool = False
    """Play with Companion cards (rulebook: optional)."""
    player_side: str = "barista"
    """Side of the Player card every seat uses (content/player.toml), unless ``player_sides`` is given."""
    player_sides: list[str] = []
    """Co-op (2-Player Variant Setup 2: "Both Players individually complete the Player Setup"):
    one side per seat, in seat order, e.g. ``["barista", "night-owl"]``; empty: ``player_side``."""
    board_quests: list[str] = []
    """Quest Board variant only: the 10 quest ids the players choose (3 one-star, 4 two-star,
    3 three-star, all different); empty: the server draws them at random by star count."""


# ---------------------------------------------------------------------------------------------
# Commands


class KeepItem(Command, tag="qoc.keep_item"):
    """Player Setup 5: keep one of the two items drawn; the other goes to the bottom of the item deck."""

    item: str


class ChooseQuest(Command, tag="qoc.choose_quest"):
    """Questing 1: pick a face-up quest to resolve (co-op: only the Leader)."""

    quest: str


class PayForHelp(Command, tag="qoc.pay_for_help"):
    """Paying for Help: ``dice`` extra d6 at ``stars`` money each; ``companion`` draws a Companion."""

    dice: int = 1
    companion: bool = False


class Roll(Command, tag="qoc.roll"):
    """Resolving 1: make the Base Roll (co-op: both players roll their dice)."""


class ChooseDice(Command, tag="qoc.choose_dice"):
    """Co-op 2: the Leader picks 2 of their dice (indexes 0..2) and 1 of the partner's."""

    leader: list[int]
    partner: int


class Reroll(Command, tag="qoc.reroll"):
    """Luck: discard one Luck to reroll the dice at ``dice`` (indexes into ``view.dice``).

    ``payer``: co-op only, whose Luck is spent (default: the acting seat).
    """

    dice: list[int]
    payer: int | None = None


class UseItem(Command, tag="qoc.use_item"):
    """Items: use a held item; ``die`` is the target index for die items."""

    item: str
    die: int | None = None


class GiveItem(Command, tag="qoc.give_item"):
    """Co-op 7: hand one of your items to your partner (any time)."""

    item: str


class SwapItem(Command, tag="qoc.swap_item"):
    """Co-op 7: exchange your ``item`` for your partner's ``take``, one for one (any time, also
    while the items are kept and when both hold the most items allowed)."""

    item: str
    take: str


class Accept(Command, tag="qoc.accept"):
    """Accept the roll: the Fail or Success event, then the Special event, are applied.

    ``respond``: items used in response, resolved first (last in, first out).
    ``to_partner``: co-op split of the Fail/Success event: units of the ``health``/``luck``
    change and items (``item``: how many of the drawn items) given to the partner
    (0..|change|; default half of health/luck, rounded down, and no items).
    ``special_to_partner``: the same for the Special event.
    """

    respond: list[str] = []
    to_partner: dict[str, int] = {}
    special_to_partner: dict[str, int] = {}


class ChooseShopOrder(Command, tag="qoc.choose_shop_order"):
    """Co-op 6: decide which seat enters the Shop first."""

    first: int


class Buy(Command, tag="qoc.buy"):
    """Shop 5: buy the item of ``slot`` (1..3) for the price shown."""

    slot: int


class Trade(Command, tag="qoc.trade"):
    """Shop 7: swap the held ``give`` with the item on the TRADE spot, for free."""

    give: str


class SwapEnvironment(Command, tag="qoc.swap_environment"):
    """Environments 2: discard the current Environment and take the next (at the Shop)."""


class LeaveShop(Command, tag="qoc.leave_shop"):
    """Finish your Shop visit."""


QocCommand = (
    KeepItem | ChooseQuest | PayForHelp | Roll | ChooseDice | Reroll | UseItem | GiveItem | SwapItem | Accept
    | ChooseShopOrder | Buy | Trade | SwapEnvironment | LeaveShop
)
COMMAND_TYPES = (KeepItem, ChooseQuest, PayForHelp, Roll, ChooseDice, Reroll, UseItem, GiveItem,
                 SwapItem, Accept, ChooseShopOrder, Buy, Trade, SwapEnvironment, LeaveShop)


# ---------------------------------------------------------------------------------------------
# Events. Each carries the values it sets (``party`` after the event), so evolve only sets fields.


class Party(Record):
    """Attributes of the seats: per-seat health, luck, items; ``money`` is one pool in co-op."""

    health: tuple[int, ...]
    luck: tuple[int, ...]
    money: int
    items: tuple[tuple[str, ...], ...]


class SetUp(Event, tag="qoc.set_up"):
    """Setup: quest deck (face down, round 2), face-up quests, item deck, offers per seat."""

    deck: list[str]
    face_up: list[str]
    item_deck: list[str]
    offers: list[list[str]]
    environments: list[str]
    environment: str | None
    companions: list[str]
    party: Party


class ItemKept(Event, tag="qoc.item_kept"):
    seat: int
    item: str
    returned: str | None
    item_deck: list[str]
    party: Party


class LeaderRolled(Event, tag="qoc.leader_rolled"):
    """Co-op 1: each round of the roll-off (seat order); ties roll again."""

    rolls: list[list[int]]
    leader: int


class QuestChosen(Event, tag="qoc.quest_chosen"):
    seat: int
    quest: str


class HelpPaid(Event, tag="qoc.help_paid"):
    """``rolled``: the new dice if the Base Roll was already made (else rolled with it)."""

    dice: int
    cost: int
    rolled: list[int]
    companion: str | None
    companions: list[str]
    help: int
    party: Party


class Rolled(Event, tag="qoc.rolled"):
    """``base``: solo Base Roll; ``pool``: co-op dice per seat; ``extra``: help dice bought before."""

    base: list[int]
    pool: list[list[int]]
    extra: list[int]


class DiceChosen(Event, tag="qoc.dice_chosen"):
    base: list[int]


class Rerolled(Event, tag="qoc.rerolled"):
    payer: int
    indexes: list[int]
    dice: list[int]
    party: Party


class ItemUsed(Event, tag="qoc.item_used"):
    seat: int
    item: str
    dice: list[int]
    item_deck: list[str]
    party: Party


class ItemGiven(Event, tag="qoc.item_given"):
    seat: int
    item: str
    to: int
    party: Party


class ItemSwapped(Event, tag="qoc.item_swapped"):
    """Co-op 7: ``seat`` gave ``gave`` to ``to`` and took ``took`` from it."""

    seat: int
    gave: str
    took: str
    to: int
    party: Party


class QuestResolved(Event, tag="qoc.quest_resolved"):
    """``band``: fail / abandon / success; ``special``: whether the Special Condition held."""

    quest: str
    total: int
    band: Literal["fail", "abandon", "success"]
    special: bool
    responded: list[str]
    item_deck: list[str]
    companions: list[str]
    party: Party
    defeated: bool


class ShopOpened(Event, tag="qoc.shop_opened"):
    prices: list[int]
    items: list[str | None]
    item_deck: list[str]
    order: list[int]


class ShopOrderChosen(Event, tag="qoc.shop_order_chosen"):
    order: list[int]


class ItemBought(Event, tag="qoc.item_bought"):
    seat: int
    slot: int
    item: str
    price: int
    party: Party


class ItemTraded(Event, tag="qoc.item_traded"):
    seat: int
    gave: str
    took: str
    party: Party


class EnvironmentSwapped(Event, tag="qoc.environment_swapped"):
    """``party``/``item_deck``: values lowered to the new maximums (excess items to the item deck bottom)."""

    old: str | None
    new: str | None
    environments: list[str]
    party: Party
    item_deck: list[str]


class ShopLeft(Event, tag="qoc.shop_left"):
    """A visit ended; ``items``: the shop after any refill for the next visitor."""

    seat: int
    items: list[str | None]
    item_deck: list[str]


class ShopClosed(Event, tag="qoc.shop_closed"):
    """Unbought items reshuffled into the item deck; the face-down quests turn face up."""

    item_deck: list[str]
    face_up: list[str]


EVENT_TYPES = (SetUp, ItemKept, LeaderRolled, QuestChosen, HelpPaid, Rolled, DiceChosen, Rerolled,
               ItemUsed, ItemGiven, ItemSwapped, QuestResolved, ShopOpened, ShopOrderChosen, ItemBought,
               ItemTraded, EnvironmentSwapped, ShopLeft, ShopClosed)

HIDDEN_FIELDS = ("deck", "item_deck", "environments", "companions")
"""Event fields holding face-down deck orders; redacted for every seat and spectators."""


# ---------------------------------------------------------------------------------------------
# View


class QuestCard(Record):
    id: str
    name: str
    stars: int
    fail: int
    success: int
    special: str
    """Human text of the Special Condition (empty if none)."""
    fail_event: str = ""
    """The Fail event's text, e.g. ``Health -1``; "" if none."""
    success_event: str = ""
    """The Success event's text, e.g. ``Money +3, Item +1``."""
    special_event: str = ""
    """The Special event's text (applies after the Fail or Success event)."""


class CardText(Record):
    """An item, environment or companion card as printed: its name and text."""

    id: str
    name: str
    text: str


class SeatView(Record):
    seat: int
    health: int
    luck: int
    items: list[str]
    max_health: int
    max_luck: int
    max_items: int


class QocView(Record):
    """What one seat (or a spectator) sees. ``legal``: the seat's accepted commands now."""

    mode: str
    phase: str
    round: int
    face_up: list[QuestCard]
    deck_left: int
    active: QuestCard | None
    help: int
    rolled: bool
    dice: list[int]
    pool: list[list[int]]
    total: int
    companion: str | None
    seats: list[SeatView]
    money: int
    max_money: int
    leader: int
    offers: list[str]
    environment: str | None
    shop_prices: list[int]
    shop_items: list[str | None]
    shop_trade_slot: int
    shop_turn: int | None
    kept: list[str]
    failed: list[str]
    abandoned: list[str]
    score: int
    star_grade: int
    grade: str
    defeated: bool
    legal: list[QocCommand]
    """The seat's commands now, each checked against decide; complete except ``accept``,
    which is a sample (docs/games/quests_over_coffee.md "view.legal": the rule for the rest)."""
    cards: list[CardText] = []
    """Name and text of every item, environment and companion card in sight (held items, own
    offers, the Shop's items, the environment in play, the active companion)."""
    shop_costs: list[int] = []
    """The Money each Shop spot actually charges (its die plus the environment, e.g. Rainy
    Window Seat +1); the TRADE spot's entry is 0 (it is traded, not bought)."""
    help_cost: int = 0
    """Money per help die for the active quest (its stars plus the environment); 0 without one."""
    item_deck_left: int = 0
    environment_deck_left: int = 0
    companion_deck_left: int = 0
