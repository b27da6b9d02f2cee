"""The Orange Quest content pack (``content/*.toml``), loaded and validated at import.

Shapes (all file order, the order every shuffle starts from):

- ``HEROES``: hero id -> :class:`Hero` (6); ``BOSSES``: boss id -> :class:`Boss` (6, one ``last``);
  ``STRENGTHENING``: side id (``five``, ``six``) -> :class:`Side`; ``LOCATIONS``: id -> :class:`Location` (10).
- ``CARDS``: physical card id (``hook3``) -> :class:`Card` (102); ``PACK``: every card id.

A bad file raises :class:`~services.kernel.ContentError` naming the file and the field
(``cards.toml: $.card[3].frame: ...``). Effects, abilities and signposts are named handlers
(``effects.py``, ``signposts.py``); a name without a handler is refused here.
Source: rulebook "Components", "Action Cards", "Signposts"; RULINGS.md "Orange Quest", "Content packs".
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from services.kernel import ContentError

DIR = Path(__file__).parent / "content"
SIGNPOSTS = ("rage", "fair", "fog_of_generosity", "sacred_place", "loss_of_losses", "breakage", "powerlessness",
             "treasure", "chaos", "candy_madness")
"""The 10 signposts in the precedence order of the rulebook's "Signposts" page."""
ABILITIES = frozenset({"keep_candies", "scout_combat", "coin_boost", "draw_one", "candy_one", "swap_two"})
EFFECTS = frozenset({"damage", "reduce", "block", "curse", "steal_candy", "discard_random", "draw", "gamble", "equip",
                     "candy", "everyone_draws", "lose_candy", "steal_card"})
USES = frozenset({"lucky", "draw", "boost"})
TRIGGERS = frozenset({"fight_start", "party_start", "morning"})

Frame = Literal["quick", "combat", "party"]
Icon = Literal["equipment", "curse", "mischief", "neutral"]


class _Entry(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    id: str
    name: str
    source: str


class Hero(_Entry, frozen=True):
    ability: str
    text: str


class Cell(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One reward cell: candies for each player of the cell, action cards for the cell."""

    candies: int = 0
    cards: int = 0


class Boss(_Entry, frozen=True):
    health: int
    trophy: int
    leader: Cell
    participants: Cell
    others: Cell
    last: bool = False


class Side(_Entry, frozen=True):
    health: int
    bonus: Cell


class Location(_Entry, frozen=True):
    signposts: list[str]


class CardDesign(_Entry, frozen=True):
    frame: Frame
    icon: Icon
    effect: str
    text: str
    count: int = 1
    value: int = 0
    target: Literal["none", "other", "any"] = "none"
    trigger: str = ""
    use: str = ""


class Card(msgspec.Struct, frozen=True):
    """One physical card: ``id`` (``hook3``) and its design's fields (``base`` = design id)."""

    id: str
    base: str
    name: str
    frame: str
    icon: str
    effect: str
    value: int
    target: str
    trigger: str
    use: str
    text: str
    source: str


class _Heroes(msgspec.Struct, forbid_unknown_fields=True):
    hero: list[Hero]


class _Bosses(msgspec.Struct, forbid_unknown_fields=True):
    boss: list[Boss]
    strengthening: list[Side]


class _Locations(msgspec.Struct, forbid_unknown_fields=True):
    location: list[Location]


class _Cards(msgspec.Struct, forbid_unknown_fields=True):
    card: list[CardDesign]


def _load(path: Path, shape: type):
    try:
        return msgspec.toml.decode(path.read_bytes(), type=shape)
    except (OSError, msgspec.DecodeError) as exc:
        raise ContentError(f"{path.name}: {exc}") from None


def _check_entries(name: str, key: str, entries: list) -> None:
    ids = [e.id for e in entries]
    for i, e in enumerate(entries):
        if not e.id.replace("_", "").isalpha() or not e.id.islower() or len(e.id) > 24:
            raise ContentError(f"{name}: $.{key}[{i}].id: lowercase letters and _ (at most 24), not {e.id!r}")
        if not (e.source.startswith("rulebook") or e.source.startswith("house")):
            raise ContentError(f"{name}: $.{key}[{i}].source: must start with 'rulebook' or 'house', not {e.source!r}")
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ContentError(f"{name}: $.{key}.id: duplicate ids {dup}")


def load_heroes(path: Path) -> dict[str, Hero]:
    """Heroes by id. Raises ContentError: a bad field, an unknown ability, not 6 heroes."""
    heroes = _load(path, _Heroes).hero
    _check_entries(path.name, "hero", heroes)
    for i, h in enumerate(heroes):
        if h.ability not in ABILITIES:
            raise ContentError(f"{path.name}: $.hero[{i}].ability: unknown ability {h.ability!r} (known: {sorted(ABILITIES)})")
    if len(heroes) != 6:
        raise ContentError(f"{path.name}: $.hero: 6 heroes are required (rulebook Components), not {len(heroes)}")
    return {h.id: h for h in heroes}


def load_bosses(path: Path) -> tuple[dict[str, Boss], dict[str, Side]]:
    """Bosses and strengthening sides by id. Raises ContentError: a bad field, not 6 bosses or
    not exactly one ``last`` boss, not the sides ``five`` and ``six``."""
    data = _load(path, _Bosses)
    _check_entries(path.name, "boss", data.boss)
    _check_entries(path.name, "strengthening", data.strengthening)
    for i, b in enumerate(data.boss):
        if not 10 <= b.health <= 500 or not 0 <= b.trophy <= 20:
            raise ContentError(f"{path.name}: $.boss[{i}]: health 10-500 and trophy 0-20 are required")
        for cell in ("leader", "participants", "others"):
            c = getattr(b, cell)
            if not 0 <= c.candies <= 10 or not 0 <= c.cards <= 10:
                raise ContentError(f"{path.name}: $.boss[{i}].{cell}: candies and cards 0-10 are required")
    if len(data.boss) != 6 or sum(b.last for b in data.boss) != 1:
        raise ContentError(f"{path.name}: $.boss: 6 bosses, exactly one of them last (Candy Joe), are required")
    sides = {s.id: s for s in data.strengthening}
    if set(sides) != {"five", "six"}:
        raise ContentError(f"{path.name}: $.strengthening: the two sides five and six are required")
    return {b.id: b for b in data.boss}, sides


def load_locations(path: Path) -> dict[str, Location]:
    """Locations by id. Raises ContentError: an unknown signpost, a list out of precedence order,
    not 10 locations, or a signpost no location uses."""
    locs = _load(path, _Locations).location
    _check_entries(path.name, "location", locs)
    for i, loc in enumerate(locs):
        for s in loc.signposts:
            if s not in SIGNPOSTS:
                raise ContentError(f"{path.name}: $.location[{i}].signposts: unknown signpost {s!r} (known: {list(SIGNPOSTS)})")
        order = [SIGNPOSTS.index(s) for s in loc.signposts]
        if not loc.signposts or order != sorted(set(order)):
            raise ContentError(f"{path.name}: $.location[{i}].signposts: a non-empty list in precedence order, each once")
    used = {s for loc in locs for s in loc.signposts}
    if len(locs) != 10 or used != set(SIGNPOSTS):
        raise ContentError(f"{path.name}: $.location: 10 locations using all 10 signposts are required")
    return {loc.id: loc for loc in locs}


def load_cards(path: Path) -> dict[str, Card]:
    """Physical cards by id. Raises ContentError: a bad field, an unknown handler, not 102 cards."""
    designs = _load(path, _Cards).card
    _check_entries(path.name, "card", designs)
    out: dict[str, Card] = {}
    for i, d in enumerate(designs):
        where = f"{path.name}: $.card[{i}]"
        if d.effect not in EFFECTS:
            raise ContentError(f"{where}.effect: unknown effect {d.effect!r} (known: {sorted(EFFECTS)})")
        if not 1 <= d.count <= 20 or not 0 <= d.value <= 100:
            raise ContentError(f"{where}: count 1-20 and value 0-100 are required")
        if (d.effect == "curse") != (d.icon == "curse") or (d.effect == "curse") != bool(d.trigger) \
                or (d.trigger and d.trigger not in TRIGGERS):
            raise ContentError(f"{where}.trigger: a curse needs a known trigger ({sorted(TRIGGERS)}), other cards none")
        if (d.effect == "equip") != (d.icon == "equipment") or (d.effect == "equip") != bool(d.use) \
                or (d.use and d.use not in USES):
            raise ContentError(f"{where}.use: equipment needs a known use ({sorted(USES)}), other cards none")
        if (d.frame == "combat") != (d.effect in ("damage", "reduce")):
            raise ContentError(f"{where}.frame: damage and reduce are the combat cards' effects")
        for n in range(1, d.count + 1):
            cid = f"{d.id}{n}"
            out[cid] = Card(id=cid, base=d.id, name=d.name, frame=d.frame, icon=d.icon, effect=d.effect, value=d.value,
                            target=d.target, trigger=d.trigger, use=d.use, text=d.text, source=d.source)
    if len(out) != 102:
        raise ContentError(f"{path.name}: $.card: 102 action cards are required (rulebook Components), not {len(out)}")
    return out


HEROES = load_heroes(DIR / "heroes.toml")
BOSSES, STRENGTHENING = load_bosses(DIR / "bosses.toml")
LOCATIONS = load_locations(DIR / "locations.toml")
CARDS = load_cards(DIR / "cards.toml")
PACK = tuple(CARDS)
LAST_BOSS = next(b for b in BOSSES.values() if b.last).id
