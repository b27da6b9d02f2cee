"""``rules`` and ``help <card>`` for chat: a few lines per title, and any content entry by id or name.

Pure. ``rules_text(title)`` summarises the title (its game page in docs/games/ has the whole
rules with their rulebook sources); ``card_help(title, words, content)`` finds an entry of the
title's content (``GET /v1/titles/{title}`` ``content``: cards, tiles, items, heroes, quests,
treasures ...) whose id or name matches the words and shows its fields.
"""

from __future__ import annotations

from typing import Any

RULES = {
    "questeros": "Questeros (2-6): trick-taking over 7 rounds. Each round every seat bids the quests (tricks) it will win, "
                 "then plays one card a turn; follow the preferred class if you can, Epics and Gods have abilities. "
                 "Winning exactly your bid scores XP; the most XP after the last round wins.",
    "eros_quest": "Ero's Quest (solo): the Questeros deck as an adventure. Develop your hand, purchase Orbs, meet the "
                  "Epic encounters and fight them in combat; complete the encounters before the deck runs out.",
    "fate_deck": "Fate Deck (GM + 1-32 players): the Questeros deck as a role-playing tool. The GM awards and reveals "
                 "cards, rolls fate and reads meanings; players hand in cards. The GM ends the session.",
    "orion_duel": "Orion Duel (2): place hex tiles of both colours on the 85-space playmat to link constellations "
                  "around galaxy and black hole tokens: a link across the mat, 4 galaxies in your group, 3 black holes in the "
                  "opponent's; whoever leads in these after a placement wins at once (tiles out: a tiebreak).",
    "quests_over_coffee": "Quests Over Coffee (1-2, co-op for 2): roll dice to complete quests, keep items, pay "
                          "companions, shop between quests; the party wins or loses together.",
    "reventure_orbtale": "Reventure: Orbtale (2-4): chapters of exploration, secret organization of your hand and "
                         "combat with face-down cards; collect the 4 orbs. Secret choices: say them privately.",
}


def rules_text(title: str | None) -> str:
    """A few lines about ``title`` and where its full rules are; every title's name if None."""
    if title is None:
        return "Rules of which title? " + ", ".join(sorted(RULES))
    head = RULES.get(title, f"{title}: see its game page.")
    return f"{head} Full rules: docs/games/{title}.md. Commands: help {title}."


def _entries(obj: Any, kind: str = "") -> list[tuple[str, dict]]:
    """Every dict in a content tree with the name of the list holding it."""
    found: list[tuple[str, dict]] = []
    if isinstance(obj, dict):
        if any(k in obj for k in ("id", "name", "epic")):
            found.append((kind, obj))
        for k, v in obj.items():
            found.extend(_entries(v, k if isinstance(v, list) else kind))
    elif isinstance(obj, list):
        for v in obj:
            found.extend(_entries(v, kind))
    return found


def _scalar(v: Any) -> bool:
    return isinstance(v, str | int | float | bool) and v != ""


def card_help(title: str, words: list[str], content: dict) -> str:
    """What the content says about the entry named by ``words`` (an id such as ``b11``, ``e5``,
    ``triangle_2``, or a name such as ``the warlock``); a sentence saying so if none matches.
    Questeros-deck titles also read card words (``11 blades``, ``epic 5``) as the chat grammar does.
    """
    query = " ".join(words).lower().strip()
    keys = {query, query.replace(" ", "_"), query.replace(" ", "")}
    if title in ("questeros", "eros_quest", "fate_deck"):
        from services.frontends.chat.common import ChatError
        from services.frontends.chat.questeros import card

        try:
            keys.add(card(words))
        except ChatError:
            pass
    hits = []
    for kind, e in _entries(content):
        ids = {str(e.get(f, "")).lower() for f in ("id", "name", "epic")}
        if ids & keys:
            hits.append((kind, e))
    if not hits:
        return f"Nothing named {query[:40]!r} in {title}'s content (cards by id, e.g. b11, or by name)."
    lines = []
    for kind, e in hits[:3]:
        fields = [f"{k}={v}" for k, v in e.items() if _scalar(v) and k not in ("source",)]
        lines.append(f"{kind or 'entry'}: " + ", ".join(fields)[:380])
    return "\n".join(lines)
