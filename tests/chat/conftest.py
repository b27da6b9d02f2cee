"""Chat tests: a real gateway per module, with every title's worker, the projector, the bot
service and the clock service (deadline warnings and timeouts), on the test Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio.from_thread
import pytest

from services.adapters.redis_store import Settings
from services.gateway.server import gateway_running
from tests.gateway.conftest import Running, make_config


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """asyncio only: the IRC adapter's library (pydle) is asyncio-native."""
    return "asyncio"


@pytest.fixture(scope="module")
def gateway(redis_url: str) -> Iterator[Running]:
    settings = Settings(url=redis_url, namespace=f"gw{uuid.uuid4().hex[:10]}", partitions=4)
    config = make_config()
    kwargs = {"worker_kwargs": {"min_idle_ms": 2000}, "projector_kwargs": {"min_idle_ms": 2000}, "bots": True,
              "clock": True}
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(gateway_running(settings, config, service_kwargs=kwargs)) as port:
            yield Running(f"http://127.0.0.1:{port}", settings, config)
