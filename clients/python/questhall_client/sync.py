"""The blocking facade: the async client run on an event loop in a background thread.

    from questhall_client.sync import Gateway

    with Gateway("http://127.0.0.1:8000") as gw:
        g = gw.create("questeros", seats=2)
        alice, bob = gw.join(g.game_id, "Alice"), gw.join(g.game_id, "Bob")
        alice.start()
        with alice.subscribe(since=0) as sub:
            msg = sub.recv(timeout=10)
        alice.submit({"type": "questeros.bid", "quests": 3})

Every coroutine method of :class:`questhall_client.Gateway`, :class:`~questhall_client.SeatClient`
and :class:`~questhall_client.Subscription` is here a blocking method of the same name and
arguments, returning the same values (seats and sockets wrapped in turn) and raising the same
errors; attributes (``receipts``, ``seat``, ``token``, ``last_version`` ...) read through. One
thread per :class:`Gateway` (anyio's blocking portal), stopped by ``close()`` / ``with``.
"""

from __future__ import annotations

import inspect
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from questhall_client import client as _async


class _Proxy:
    """Blocking calls of an async object's coroutine methods through ``portal``."""

    _wrap: dict[str, Any] = {}

    def __init__(self, portal: BlockingPortal, target: Any) -> None:
        object.__setattr__(self, "_portal", portal)
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            return _wrapped(self._portal, self._portal.call(lambda: attr(*args, **kw)))

        call.__doc__ = attr.__doc__
        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __repr__(self) -> str:
        return f"sync {self._target!r}"


def _wrapped(portal: BlockingPortal, value: Any) -> Any:
    if isinstance(value, _async.SeatClient):
        return SeatClient(portal, value)
    return value


class Subscription(_Proxy):
    """A socket: ``with seat.subscribe(since) as sub: sub.recv(timeout)``; iterate for messages."""

    def __enter__(self) -> Subscription:
        object.__setattr__(self, "_cm", self._portal.wrap_async_context_manager(self._target))
        self._cm.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._cm.__exit__(*exc)

    def __iter__(self):
        while True:
            yield self.recv()


class SeatClient(_Proxy):
    """One seat (see :class:`questhall_client.SeatClient`), blocking."""

    def subscribe(self, since: int = 0) -> Subscription:
        return Subscription(self._portal, self._target.subscribe(since))

    def ws_command(self, *args: Any, **kw: Any) -> dict:
        return self._target.ws_command(*args, **kw)

    def sign(self, command: Any, version: int) -> str:
        return self._target.sign(command, version)


class Gateway(_Proxy):
    """A blocking client of one gateway (see :class:`questhall_client.Gateway`). Use ``with``."""

    def __init__(self, base_url: str, *, timeout: float = 30.0, rate_limit_retries: int = _async.RATE_LIMIT_RETRIES,
                 max_retry_wait: float = _async.MAX_RETRY_WAIT) -> None:
        cm = start_blocking_portal()
        portal = cm.__enter__()

        async def make() -> _async.Gateway:  # httpx's client is made on the loop that uses it
            return _async.Gateway(base_url, timeout=timeout, rate_limit_retries=rate_limit_retries,
                                  max_retry_wait=max_retry_wait)

        super().__init__(portal, portal.call(make))
        object.__setattr__(self, "_cm", cm)

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP client and stop the loop's thread (idempotent)."""
        cm = self.__dict__.pop("_cm", None)
        if cm is not None:
            self._portal.call(self._target.aclose)
            cm.__exit__(None, None, None)

    def seat(self, *args: Any, **kw: Any) -> SeatClient:
        return SeatClient(self._portal, self._target.seat(*args, **kw))

    def spectate(self, game_id: str, since: int = 0) -> Subscription:
        return Subscription(self._portal, self._target.spectate(game_id, since))

    def full_body(self, command: Any) -> dict:
        return self._target.full_body(command)
