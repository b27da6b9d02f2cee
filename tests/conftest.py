"""Shared fixtures. Importing the toy title registers it for every test."""

import tests.toygame  # noqa: F401  (registers the test-only title)
