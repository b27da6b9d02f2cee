"""The Questeros deck, loaded from ``content/deck.toml`` and validated at import.

Shape: ``CARDS`` maps a card id to a :class:`Card`; ``ORDER`` is the canonical order (file
order), the order every shuffle starts from. Raises :class:`ContentError` naming the file and
the field (``deck.toml: card[12].value: ...``) for a bad file.
Source: rulebook "Card Notes / Card Structure"; RULINGS.md "Questeros" (values, Epic order).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from services.kernel import ContentError

DECK_FILE = Path(__file__).parent / "content" / "deck.toml"
CLASSES = ("blades", "staves", "orbs", "cups")
PREFIX = {"blades": "b", "staves": "s", "orbs": "o", "cups": "c"}
SET_ASIDE = tuple(f"e{v}" for v in range(10, 16))
"""The Epics 10-15, set aside at setup with 10 on top (rulebook: Multi-Player Game Setup)."""


@dataclass(frozen=True)
class Card:
    id: str
    kind: str
    """``class``, ``epic`` or ``god``."""
    value: int
    """1-14 for Class cards, 0-21 for Epics; 0 (unused) for Gods."""
    name: str
    source: str
    cls: str = ""
    """The Class (``blades``...) of a Class card; empty otherwise."""
    on_play: str = ""
    end_of_turn: str = ""

    @property
    def suit(self) -> str:
        """The follow category: the Class, ``epic`` for Epics, ``god`` for the Gods.

        RULINGS.md "Questeros" (Gods): a God is neither a Class nor an Epic card (rulebook: "56
        Class Cards, 22 Epic Cards & 2 God cards")."""
        return self.cls if self.kind == "class" else self.kind


def read_toml(path: Path) -> dict:
    """The parsed TOML of a content file of the Questeros deck's titles. Raises ContentError
    naming the file when it cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ContentError(f"{path.name}: cannot read: {exc}") from None


def load_deck(path: Path, known_abilities: frozenset[str]) -> tuple[dict[str, Card], tuple[str, ...]]:
    """Read and validate a deck file. Returns ``(cards by id, canonical order)``.

    Raises ContentError naming ``path`` and the failing field.
    """
    name = path.name
    data = read_toml(path)
    entries = data.get("card")
    if not isinstance(entries, list):
        raise ContentError(f"{name}: card: a list of [[card]] tables is required")
    cards: dict[str, Card] = {}
    for i, e in enumerate(entries):
        where = f"{name}: card[{i}]"
        if not isinstance(e, dict):
            raise ContentError(f"{where}: must be a table")
        for f, typ in (("id", str), ("kind", str), ("name", str), ("source", str)):
            if not isinstance(e.get(f), typ) or not e[f]:
                raise ContentError(f"{where}.{f}: a non-empty string is required")
        src = e["source"]
        if not (src.startswith("rulebook") or src.startswith("house")):
            raise ContentError(f"{where}.source: must start with 'rulebook' or 'house', not {src!r}")
        kind = e["kind"]
        value = e.get("value", 0)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ContentError(f"{where}.value: an integer is required")
        cls = e.get("class", "")
        if kind == "class":
            if cls not in CLASSES:
                raise ContentError(f"{where}.class: must be one of {CLASSES}, not {cls!r}")
            if not 1 <= value <= 14:
                raise ContentError(f"{where}.value: a Class card is 1-14, not {value}")
            want = f"{PREFIX[cls]}{value}"
        elif kind == "epic":
            if not 0 <= value <= 21:
                raise ContentError(f"{where}.value: an Epic card is 0-21, not {value}")
            want = f"e{value}"
        elif kind == "god":
            want = e["id"]
        else:
            raise ContentError(f"{where}.kind: must be class, epic or god, not {kind!r}")
        if e["id"] != want:
            raise ContentError(f"{where}.id: expected {want!r} for this card, not {e['id']!r}")
        if e["id"] in cards:
            raise ContentError(f"{where}.id: duplicate id {e['id']!r}")
        for hook in ("on_play", "end_of_turn"):
            h = e.get(hook, "")
            if h and h not in known_abilities:
                raise ContentError(f"{where}.{hook}: unknown ability {h!r}")
        cards[e["id"]] = Card(id=e["id"], kind=kind, value=value, name=e["name"], source=src, cls=cls,
                              on_play=e.get("on_play", ""), end_of_turn=e.get("end_of_turn", ""))
    kinds = [c.kind for c in cards.values()]
    if (kinds.count("class"), kinds.count("epic"), kinds.count("god"), len(cards)) != (56, 22, 2, 80):
        raise ContentError(f"{name}: card: need 56 class, 22 epic and 2 god cards (80), got "
                           f"{kinds.count('class')}, {kinds.count('epic')}, {kinds.count('god')}")
    return cards, tuple(cards)
