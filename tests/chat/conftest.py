"""Chat tests: a real gateway (with workers, projector and the bot service) per module."""

import pytest

from tests.gateway.conftest import gateway  # noqa: F401  (the fixture)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """asyncio only: the IRC adapter's library (pydle) is asyncio-native."""
    return "asyncio"
