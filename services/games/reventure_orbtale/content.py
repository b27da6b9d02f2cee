"""The Orbtale house content pack: heroes, treasure deck, chapter decks (``content/*.toml``).

Loaded and validated at import; a bad file raises :class:`ContentError` naming the file and
the field (``treasures.toml: card[3].effect: ...``). Shapes:

- ``HEROES``: hero id -> :class:`Hero` (12, file order); ``HERO_ORDER``: the ids in file order.
- ``CARDS``: card id -> :class:`Card`, one per physical card (``sword1``..``sword6``, ``orb_life``);
  ``PACK``: every card id in file order (38 cards), the order every shuffle starts from.
- ``WHO`` / ``WHAT``: the two chapter decks, id -> text (6 each, file order).

Source: rulebook "Components", "Preparation"; RULINGS.md "Reventure: Orbtale" (house content).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from services.kernel import ContentError

DIR = Path(__file__).parent / "content"
KINDS = ("attack", "defense", "strategy", "orb")
SKILLS = frozenset({"cleave", "rage", "riposte", "brew", "keep_maps", "en_garde", "deep_pockets", "scout",
                    "juggle", "meditate", "plunder", "mimic"})
"""Skill handlers the rules implement (hooks in rules.py / effects.py)."""
EFFECTS = frozenset({"damage", "damage_and_steal", "damage_and_discard", "heal", "draw", "heal_and_draw",
                     "steal_inventory", "bomb", "steal_hand", "swap_heroes"})
"""Card effect handlers (effects.py ``EFFECTS``; checked equal at import)."""
BONUSES = frozenset({"chapter_heal", "chapter_draw", "more_damage", "bigger_hand"})
WHO = frozenset({"most_inventory", "fewest_inventory", "lowest_health", "highest_health", "orb_bearers", "no_orb"})
WHAT = frozenset({"lose_health", "heal", "draw_one", "draw_two", "discard_one", "discard_two"})
_ID = re.compile(r"^[a-z][a-z_]{0,23}$")


@dataclass(frozen=True)
class Hero:
    id: str
    name: str
    skill: str
    text: str
    source: str


@dataclass(frozen=True)
class Card:
    id: str
    """The physical card's id (``sword3``)."""
    base: str
    """The content entry's id (``sword``)."""
    name: str
    kind: str
    effect: str
    amount: int
    bonus: str
    text: str
    source: str


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ContentError(f"{path.name}: cannot read: {exc}") from None


def _entries(path: Path, data: dict, key: str) -> list[dict]:
    entries = data.get(key)
    if not isinstance(entries, list) or not entries:
        raise ContentError(f"{path.name}: {key}: a non-empty list of [[{key}]] tables is required")
    for i, e in enumerate(entries):
        where = f"{path.name}: {key}[{i}]"
        if not isinstance(e, dict):
            raise ContentError(f"{where}: must be a table")
        for f in ("id", "text", "source"):
            if not isinstance(e.get(f), str) or not e[f]:
                raise ContentError(f"{where}.{f}: a non-empty string is required")
        if not _ID.match(e["id"]):
            raise ContentError(f"{where}.id: lowercase letters and _ (at most 24), not {e['id']!r}")
        if not (e["source"].startswith("rulebook") or e["source"].startswith("house")):
            raise ContentError(f"{where}.source: must start with 'rulebook' or 'house', not {e['source']!r}")
    ids = [e["id"] for e in entries]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ContentError(f"{path.name}: {key}.id: duplicate ids {dup}")
    return entries


def load_heroes(path: Path, skills: frozenset[str]) -> dict[str, Hero]:
    """Heroes by id (file order). Raises ContentError for a bad file, an unknown skill or not 12 heroes."""
    out: dict[str, Hero] = {}
    for i, e in enumerate(_entries(path, _read(path), "hero")):
        where = f"{path.name}: hero[{i}]"
        for f in ("name", "skill"):
            if not isinstance(e.get(f), str) or not e[f]:
                raise ContentError(f"{where}.{f}: a non-empty string is required")
        if e["skill"] not in skills:
            raise ContentError(f"{where}.skill: unknown skill {e['skill']!r} (known: {sorted(skills)})")
        out[e["id"]] = Hero(id=e["id"], name=e["name"], skill=e["skill"], text=e["text"], source=e["source"])
    if len(out) != 12:
        raise ContentError(f"{path.name}: hero: 12 heroes are required (ruling), not {len(out)}")
    return out


def load_treasures(path: Path, effects: frozenset[str], bonuses: frozenset[str]) -> dict[str, Card]:
    """Physical cards by id (file order). Raises ContentError for a bad field or not exactly 4 orbs."""
    out: dict[str, Card] = {}
    for i, e in enumerate(_entries(path, _read(path), "card")):
        where = f"{path.name}: card[{i}]"
        kind, count, amount = e.get("kind"), e.get("count", 1), e.get("amount", 0)
        if kind not in KINDS:
            raise ContentError(f"{where}.kind: must be one of {KINDS}, not {kind!r}")
        for f, v, lo in (("count", count, 1), ("amount", amount, 0)):
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= 9:
                raise ContentError(f"{where}.{f}: an integer {lo}-9 is required")
        if e.get("effect") not in effects:
            raise ContentError(f"{where}.effect: unknown effect {e.get('effect')!r} (known: {sorted(effects)})")
        bonus = e.get("bonus", "")
        if (kind == "orb") != bool(bonus) or (bonus and bonus not in bonuses):
            raise ContentError(f"{where}.bonus: an orb needs a known bonus ({sorted(bonuses)}), other cards none")
        if kind == "orb" and count != 1:
            raise ContentError(f"{where}.count: each orb is a single card")
        if not isinstance(e.get("name"), str) or not e["name"]:
            raise ContentError(f"{where}.name: a non-empty string is required")
        for n in range(1, count + 1):
            cid = e["id"] if kind == "orb" else f"{e['id']}{n}"
            out[cid] = Card(id=cid, base=e["id"], name=e["name"], kind=kind, effect=e["effect"], amount=amount,
                            bonus=bonus, text=e["text"], source=e["source"])
    orbs = [c for c in out.values() if c.kind == "orb"]
    if len(orbs) != 4:
        raise ContentError(f"{path.name}: card: exactly 4 orbs are required (rulebook), not {len(orbs)}")
    return out


def load_chapters(path: Path, who: frozenset[str], what: frozenset[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The two chapter decks (id -> text). Raises ContentError for an unknown handler id."""
    data = _read(path)
    decks = []
    for key, known in (("who", who), ("what", what)):
        deck = {}
        for i, e in enumerate(_entries(path, data, key)):
            if e["id"] not in known:
                raise ContentError(f"{path.name}: {key}[{i}].id: no handler {e['id']!r} (known: {sorted(known)})")
            deck[e["id"]] = e["text"]
        decks.append(deck)
    return decks[0], decks[1]


HEROES = load_heroes(DIR / "heroes.toml", SKILLS)
HERO_ORDER = tuple(HEROES)
CARDS = load_treasures(DIR / "treasures.toml", EFFECTS, BONUSES)
PACK = tuple(CARDS)
WHO_TEXT, WHAT_TEXT = load_chapters(DIR / "chapters.toml", WHO, WHAT)
