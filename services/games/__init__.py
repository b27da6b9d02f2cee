"""Shipped titles. Importing this package registers each of them (one import per title)."""

from services.games import orion_duel  # noqa: F401
from services.games import quests_over_coffee  # noqa: F401
from services.games import questeros  # noqa: F401
