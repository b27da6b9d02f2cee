"""Chat tests: a real gateway (with workers, projector and the bot service) per module."""

from tests.gateway.conftest import gateway  # noqa: F401  (the fixture)
