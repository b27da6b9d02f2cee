"""Reply inboxes: a client process waits for any number of outcomes on a constant number of connections."""

from __future__ import annotations

import time
import uuid

import anyio

from schemas.envelope import Accepted, CommandEnvelope, CreateGame
from services.adapters.redis_store import CommandBus, connect
from services.runtime.serve import services_running


async def _connections(admin, name: str) -> int:
    return sum(1 for c in await admin.client_list() if c.get("name") == name)


async def _until(cond, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not await cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        await anyio.sleep(0.05)


def test_a_client_keeps_a_constant_number_of_connections_while_1000_commands_wait(settings):
    """1,000 commands wait (no worker yet) on one bus: the process holds at most its pool's 8
    connections, and when a worker starts every waiter gets its own outcome through the inbox
    (or the stored-outcome fallback)."""
    async def main():
        name = f"inbox-test-{uuid.uuid4().hex[:8]}"
        r = connect(settings.url, max_connections=8, client_name=name)
        admin = connect(settings.url)
        bus = CommandBus(r, settings)
        outs: dict[str, object] = {}
        n = 1000

        async def one(i: int) -> None:
            env = CommandEnvelope(command_id=f"c{i}", game_id=f"g{i}", title="toy", body=CreateGame(seats=2, options={}))
            outs[env.game_id] = await bus.submit(env, timeout=120)

        try:
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(one, i)

                async def sent() -> bool:
                    total = 0
                    for p in range(settings.partitions):
                        total += await admin.xlen(settings.keys.commands(p, "toy"))
                    return total == n and len(bus.inbox) == n

                await _until(sent)
                seen = {await _connections(admin, name)}
                for _ in range(5):
                    await anyio.sleep(0.2)
                    seen.add(await _connections(admin, name))
                assert max(seen) <= 8, seen  # the pool's bound, not one per waiting command
                assert len(outs) == 0
                async with services_running(settings, titles=["toy"], projector=False):
                    await _until(lambda: _done(outs, n))
                    assert await _connections(admin, name) <= 8
            assert all(isinstance(o, Accepted) and o.game_id == g and o.version == 1 for g, o in outs.items()), outs
            assert bus.inbox.delivered + bus.inbox.fallbacks == n and bus.inbox.delivered > 0
            assert len(bus.inbox) == 0
        finally:
            await r.aclose()
            await admin.aclose()

    anyio.run(main)


async def _done(outs: dict, n: int) -> bool:
    return len(outs) == n
