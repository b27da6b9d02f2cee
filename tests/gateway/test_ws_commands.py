"""A seat socket reads its next command while the one before waits for its outcome, and still
sends the seat's commands to the bus in the order they came (services/gateway/ws.py).

Before, the socket's loop awaited each command's outcome before reading the next message: at
one command per second a socket whose outcomes took more than a second queued without end
(``make bench``'s gateway open loop: p50 895 ms at 1,000 games / 1 s, the bus path 4.8 ms)."""

from __future__ import annotations

import json
import uuid

import anyio
import anyio.from_thread
import msgspec

from services.adapters.redis_store import Settings, connect
from services.gateway.server import gateway_running
from services.sdk import Gateway
from tests.gateway.conftest import make_config


def test_a_socket_sends_its_next_command_while_the_one_before_waits_in_order(redis_url):
    settings = Settings(url=redis_url, namespace=f"gw{uuid.uuid4().hex[:10]}", partitions=4)
    config = make_config(command_timeout=60.0)

    async def seated(url: str):
        async with Gateway(url) as gw:
            g = await gw.create("questeros", 2)
            a = await gw.join(g.game_id, "a", seat=0)
            await gw.join(g.game_id, "b", seat=1)
            out = await a.start()
            await a.wait_view(out.version)
            return g.game_id, a.token

    with anyio.from_thread.start_blocking_portal() as portal:  # with a worker: the game is set up
        with portal.wrap_async_context_manager(gateway_running(settings, config, service_kwargs={"titles": ["questeros"]})) as port:
            gid, token = portal.call(seated, f"http://127.0.0.1:{port}")

    async def no_worker(url: str) -> None:  # now nothing answers: every command waits
        from websockets.asyncio.client import connect as ws_connect

        r = connect(redis_url)
        stream = settings.keys.commands(settings.keys.partition(gid), "questeros")
        before = await r.xlen(stream)
        try:
            async with ws_connect(f"{url.replace('http', 'ws')}/v1/games/{gid}/seats/0/ws?since=0",
                                  additional_headers={"Authorization": f"Bearer {token}"}) as ws:
                for i in range(3):
                    await ws.send(json.dumps({"type": "command", "command_id": f"w{i}",
                                              "command": {"type": "questeros.bid", "quests": i}}))
                with anyio.fail_after(20):  # the old loop sent the second only after the first's 60 s timeout
                    while await r.xlen(stream) < before + 3:
                        await anyio.sleep(0.05)
            rows = await r.xrange(stream, "-", "+")
            ids = [msgspec.msgpack.decode(f[b"c"])["command_id"] for _, f in rows[before:]]
            assert ids == ["s0:w0", "s0:w1", "s0:w2"], ids  # in the order the socket got them
        finally:
            await r.aclose()

    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(gateway_running(settings, config, services=False)) as port:
            portal.call(no_worker, f"http://127.0.0.1:{port}")
