"""The Fate Deck's card meanings, loaded from ``content/fate_meanings.toml`` and validated at
import: ``MEANINGS[card id] -> (name, meaning, source)`` for all 80 cards.

Raises :class:`~services.kernel.ContentError` naming the file and field for a bad file.
Source: rulebook "Epic Card Meanings", "God Card Meanings", "Class Card Concepts (Fate Deck)";
rank texts and the Dragon's meaning are house (RULINGS.md "Content packs").
"""

from __future__ import annotations

from pathlib import Path

from services.games.questeros.content import CLASSES, DECK_FILE, load_deck, read_toml
from services.kernel import ContentError

MEANINGS_FILE = Path(__file__).resolve().parent.parent / "content" / "fate_meanings.toml"
CARDS, ORDER = load_deck(DECK_FILE, frozenset({"mentor_look"}))


def load_meanings(path: Path) -> dict[str, tuple[str, str, str]]:
    """Every card's ``(name, meaning, source)``. Raises ContentError naming file and field."""
    fname = path.name
    data = read_toml(path)
    for table in ("epic", "god", "class", "rank"):
        if not isinstance(data.get(table), dict):
            raise ContentError(f"{fname}: [{table}] is required")
    out: dict[str, tuple[str, str, str]] = {}
    for cid in ORDER:
        c = CARDS[cid]
        if c.kind == "class":
            rank, concept = data["rank"].get(str(c.value)), data["class"].get(c.cls)
            if not isinstance(rank, str) or not rank:
                raise ContentError(f"{fname}: rank.{c.value}: a non-empty string is required")
            if not isinstance(concept, str) or not concept:
                raise ContentError(f"{fname}: class.{c.cls}: a non-empty string is required")
            out[cid] = (c.name, f"{rank}. {concept}", "house (rank); rulebook: Class Card Concepts (Fate Deck)")
        else:
            table = "epic" if c.kind == "epic" else "god"
            text = data[table].get(cid)
            if not isinstance(text, str) or not text:
                raise ContentError(f"{fname}: {table}.{cid}: a non-empty string is required")
            src = data.get("epic_source", {}).get(cid) or (
                "rulebook: Epic Card Meanings" if c.kind == "epic" else "rulebook: God Card Meanings")
            out[cid] = (c.name, text, src)
    assert set(CLASSES) <= set(data["class"])
    return out


MEANINGS = load_meanings(MEANINGS_FILE)
