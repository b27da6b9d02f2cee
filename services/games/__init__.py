"""Shipped titles. Importing this package registers each of them (one import per title)."""

from services.games import questeros  # noqa: F401
