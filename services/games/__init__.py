"""Shipped titles. Importing this package registers each of them (one import per title)."""

from services.games import (
    orange_quest,  # noqa: F401
    orion_duel,  # noqa: F401
    questeros,  # noqa: F401
    quests_over_coffee,  # noqa: F401
    reventure_orbtale,  # noqa: F401
)
from services.games.questeros import (
    eros,  # noqa: F401  (Ero's Quest, title eros_quest)
    fate,  # noqa: F401  (the Fate Deck, title fate_deck)
)
