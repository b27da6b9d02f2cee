"""Shipped titles. Importing this package registers each of them (one import per title)."""

from services.games import quests_over_coffee  # noqa: F401
