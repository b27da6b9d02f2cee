"""The content pack of Quests Over Coffee: cards loaded from ``content/*.toml`` and validated.

Every entry names its ``source`` (``house`` or ``rulebook: <section>``; RULINGS.md "Content
packs"). Effects are names of handlers in ``rules.py`` chosen by the data. A bad file raises
:class:`services.kernel.ContentError` naming the file and the field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import msgspec

from services.kernel import ContentError

CONTENT_DIR = Path(__file__).resolve().parent / "content"

QUEST_OPS = frozenset({"health", "luck", "money", "item"})
ITEM_OPS = frozenset({"health", "luck", "money", "bump_die", "set_die", "reroll_all"})
DIE_OPS = frozenset({"bump_die", "set_die", "reroll_all"})
COMPANION_OPS = frozenset({"health", "luck", "money", "free_die"})
ENV_MODS = frozenset({"max_health", "max_luck", "max_money", "max_items", "shop_price", "help_cost"})


class _Entry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class Effect(_Entry):
    op: str
    n: int = 0


class Condition(_Entry):
    """A Special Condition (rulebook "Special Conditions" 1-4)."""

    kind: Literal["straight", "pair", "exact", "attr"]
    length: int = 3
    count: int = 2
    values: tuple[int, ...] = ()
    attr: Literal["health", "luck", "money"] = "health"
    cmp: Literal["<", ">", "="] = "="
    value: int = 0


class Quest(_Entry):
    id: str
    name: str
    source: str
    stars: int
    fail: int
    success: int
    on_fail: tuple[Effect, ...] = ()
    on_success: tuple[Effect, ...] = ()
    special: Condition | None = None
    on_special: tuple[Effect, ...] = ()


class Item(_Entry):
    id: str
    name: str
    source: str
    text: str
    effects: tuple[Effect, ...]


class Environment(_Entry):
    id: str
    name: str
    source: str
    text: str
    mods: dict[str, int] = {}


class Companion(_Entry):
    id: str
    name: str
    source: str
    text: str
    effects: tuple[Effect, ...]


class Shop(_Entry):
    id: str
    name: str
    source: str
    spots: tuple[Literal["price", "trade"], ...]


class Side(_Entry):
    id: str
    name: str
    source: str
    health: int
    luck: int
    money: int
    dice: int = 3
    max_health: int = 5
    max_luck: int = 5
    max_money: int = 10
    max_items: int = 3


class Grade(_Entry):
    source: str
    text: str
    within: int = 0
    min: int = 0


class Pack(msgspec.Struct, frozen=True, kw_only=True):
    """The whole content pack, indexed by id."""

    quests: dict[str, Quest]
    items: dict[str, Item]
    environments: dict[str, Environment]
    companions: dict[str, Companion]
    shop: Shop
    sides: dict[str, Side]
    standard_grades: tuple[Grade, ...]
    board_grades: tuple[Grade, ...]


def _read(path: Path, key: str, typ: type) -> list:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ContentError(f"{path.name}: {exc}") from None
    if key not in data:
        raise ContentError(f"{path.name}: missing table {key!r}")
    try:
        return msgspec.convert(data[key], typ)
    except msgspec.ValidationError as exc:
        raise ContentError(f"{path.name}: {key}: {exc}") from None


def _check(cond: bool, file: str, field: str, why: str) -> None:
    if not cond:
        raise ContentError(f"{file}: {field}: {why}")


def _check_source(file: str, where: str, source: str) -> None:
    _check(source == "house" or source.startswith("rulebook:"), file, f"{where}.source",
           "must be 'house' or 'rulebook: <section>'")


def _check_ops(file: str, where: str, effects: tuple[Effect, ...], ops: frozenset[str]) -> None:
    for j, e in enumerate(effects):
        _check(e.op in ops, file, f"{where}[{j}].op", f"unknown effect {e.op!r} (known: {sorted(ops)})")


def _unique(file: str, key: str, entries: list) -> dict:
    out: dict = {}
    for i, e in enumerate(entries):
        _check(e.id not in out, file, f"{key}[{i}].id", f"duplicate id {e.id!r}")
        _check_source(file, f"{key}[{i}]", e.source)
        out[e.id] = e
    return out


def load_pack(directory: Path = CONTENT_DIR) -> Pack:
    """Load and validate every content file in ``directory``. Raises ContentError(file: field: why)."""
    qs = _unique("quests.toml", "quest", _read(directory / "quests.toml", "quest", list[Quest]))
    for i, q in enumerate(qs.values()):
        w = f"quest[{i}]"
        _check(1 <= q.stars <= 3, "quests.toml", f"{w}.stars", "must be 1 to 3")
        _check(q.fail < q.success, "quests.toml", f"{w}.success", "must be above fail")
        for k in ("on_fail", "on_success", "on_special"):
            _check_ops("quests.toml", f"{w}.{k}", getattr(q, k), QUEST_OPS)
        _check(q.special is not None or not q.on_special, "quests.toml", f"{w}.on_special", "needs a special")
        if q.special is not None and q.special.kind == "exact":
            _check(bool(q.special.values) and all(1 <= v <= 6 for v in q.special.values),
                   "quests.toml", f"{w}.special.values", "must list dice values 1 to 6")
    by_stars = [sum(1 for q in qs.values() if q.stars == s) for s in (1, 2, 3)]
    _check(by_stars[0] >= 3 and by_stars[1] >= 4 and by_stars[2] >= 3 and len(qs) >= 10,
           "quests.toml", "quest", f"needs >= 3/4/3 quests of 1/2/3 stars, has {by_stars}")
    items = _unique("items.toml", "item", _read(directory / "items.toml", "item", list[Item]))
    for i, it in enumerate(items.values()):
        _check_ops("items.toml", f"item[{i}].effects", it.effects, ITEM_OPS)
    _check(len(items) >= 6, "items.toml", "item", "needs at least 6 items")
    envs = _unique("environments.toml", "environment",
                   _read(directory / "environments.toml", "environment", list[Environment]))
    for i, env in enumerate(envs.values()):
        for k in env.mods:
            _check(k in ENV_MODS, "environments.toml", f"environment[{i}].mods.{k}", "unknown modifier")
    _check(len(envs) >= 2, "environments.toml", "environment", "needs at least 2 environments")
    comps = _unique("companions.toml", "companion",
                    _read(directory / "companions.toml", "companion", list[Companion]))
    for i, c in enumerate(comps.values()):
        _check_ops("companions.toml", f"companion[{i}].effects", c.effects, COMPANION_OPS)
    _check(len(comps) >= 5, "companions.toml", "companion", "needs at least 5 companions")
    shop = _read(directory / "shop.toml", "shop", Shop)
    _check_source("shop.toml", "shop", shop.source)
    _check(len(shop.spots) == 3, "shop.toml", "shop.spots", "the Shop card has 3 Item spots")
    sides = _unique("player.toml", "side", _read(directory / "player.toml", "side", list[Side]))
    _check(len(sides) == 2, "player.toml", "side", "the Player card has two sides")
    for i, s in enumerate(sides.values()):
        _check(1 <= s.health <= s.max_health and 0 <= s.luck <= s.max_luck and 0 <= s.money <= s.max_money,
               "player.toml", f"side[{i}]", "start values must lie within the maximums")
        _check(s.dice >= 1 and s.max_items >= 1, "player.toml", f"side[{i}].dice", "must be at least 1")
    std = tuple(_read(directory / "grades.toml", "standard", list[Grade]))
    board = tuple(_read(directory / "grades.toml", "quest_board", list[Grade]))
    _check(len(std) == 4 and len(board) == 5, "grades.toml", "standard", "needs 4 standard and 5 quest board grades")
    return Pack(quests=qs, items=items, environments=envs, companions=comps, shop=shop, sides=sides,
                standard_grades=std, board_grades=board)


PACK = load_pack()
"""The pack loaded at import (a bad file stops the import with ContentError)."""
