"""Card names and texts for text front-ends, from a title's content as the gateway serves it
(``GET /v1/titles/{title}``: ``content`` = the title's ``content/*.toml`` files as JSON).

:func:`glossary` maps every content id a view can hold (a Questeros card, a Quests Over Coffee
item, quest, companion or environment, an Orbtale treasure or hero) to one line: its name and
its text. Where a file gives no text the line says what the card is (a Questeros card: its Class
and value, or Epic rank and on-play ability; Fate Deck adds each card's meaning, Ero's Quest each
Epic's Encounter text). Pure (no I/O); unknown shapes are skipped, never an error.
Source: issue 19 ("cards shown with names and texts"); the content files of each title.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _words(handler: str) -> str:
    return handler.replace("_", " ")


def _effects(effects: Any) -> str:
    if not isinstance(effects, list):
        return ""
    return ", ".join(f"{e.get('op')} {e.get('n'):+d}" if isinstance(e.get("n"), int) else str(e.get("op"))
                     for e in effects if isinstance(e, dict))


def _describe(entry: dict) -> str:
    """What a card is, where its file gives no text."""
    kind = entry.get("kind")
    if "stars" in entry and "fail" in entry and "success" in entry:  # a Quests Over Coffee quest
        out = (f"{entry['stars']} star{'s' if entry['stars'] != 1 else ''}; fail at {entry['fail']} or less "
               f"({_effects(entry.get('on_fail')) or 'nothing'}), success at {entry['success']} or more "
               f"({_effects(entry.get('on_success')) or 'nothing'})")
        special = entry.get("special")
        if isinstance(special, dict) and special.get("kind"):
            out += f"; special {special['kind']} ({_effects(entry.get('on_special')) or 'nothing'})"
        return out
    if kind == "class" and "class" in entry:
        cls = entry["class"].capitalize()
        return f"{'an' if cls[:1] in 'AEIOU' else 'a'} {cls} Class card of value {entry.get('value')}"
    if kind == "epic":
        out = f"Epic {entry.get('value')}"
        if entry.get("on_play"):
            out += f"; on play: {_words(entry['on_play'])}"
        if entry.get("end_of_turn"):
            out += f"; end of turn: {_words(entry['end_of_turn'])}"
        return out
    if kind == "god":
        return "God"
    return str(kind or "")


def _entries(content: dict) -> Iterator[dict]:
    for data in content.values():
        if not isinstance(data, dict):
            continue
        for rows in data.values():
            if isinstance(rows, list):
                yield from (r for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str) and r.get("name"))


def glossary(title: str, content: dict[str, Any]) -> dict[str, str]:
    """``{content id: "Name: text"}`` for ``title`` (``content`` as in TitleDetail.content)."""
    out: dict[str, str] = {}
    for e in _entries(content):
        text = e.get("text") or _describe(e)
        out[e["id"]] = f"{e['name']}: {text}" if text else str(e["name"])
    if title == "fate_deck":
        m = content.get("fate_meanings") or {}
        for e in (content.get("deck") or {}).get("card", []):
            cid = e.get("id")
            meaning = (m.get("epic") or {}).get(cid) or (m.get("god") or {}).get(cid)
            if meaning is None and e.get("kind") == "class":
                rank = (m.get("rank") or {}).get(str(e.get("value")), "")
                meaning = f"{rank}. {(m.get('class') or {}).get(e.get('class'), '')}".strip(". ")
            if cid in out and meaning:
                out[cid] = f"{out[cid]}. Meaning: {meaning}"
    if title == "eros_quest":
        for enc in (content.get("encounters") or {}).get("encounter", []):
            if isinstance(enc, dict) and enc.get("epic") in out and enc.get("text"):
                out[enc["epic"]] = f"{out[enc['epic']]}. Encounter: {enc['text']}"
    return out


def named_in(view: Any, known: dict[str, str], limit: int = 24) -> list[str]:
    """The content ids found anywhere in ``view`` (a JSON-like value), in order of first
    appearance, at most ``limit``."""
    seen: dict[str, None] = {}

    def walk(x: Any) -> None:
        if len(seen) >= limit:
            return
        if isinstance(x, str):
            if x in known:
                seen.setdefault(x, None)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(view)
    return list(seen)[:limit]
