"""Small gateway defects, each shown by a test that failed before its fix (issue 13 follow-up).

- A socket resumed with ``since`` = the highest version received gets the current view there
  (docs/gateway.md, "Reconnect"), not only views above ``since``.
- A client closing its socket (cleanly or by dropping the connection) is not logged as
  ``socket_redis_unavailable``.
- A name of invisible filler characters (Hangul fillers, the blank Braille pattern) is refused.
- A long-lived service says at start-up which Redis it uses, and says so loudly when it is the
  ``127.0.0.1:6379`` fallback (``REDIS_URL`` unset).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from services.kernel.errors import Rejection
from services.kernel.text import clean_name
from services.sdk import Gateway, GatewayError

ROOT = Path(__file__).resolve().parents[2]


async def _started(gw: Gateway) -> tuple[str, int]:
    g = await gw.create("questeros", 2)
    a = await gw.join(g.game_id, "a")
    await gw.join(g.game_id, "b")
    out = await a.start()
    await a.wait_view(out.version)
    return g.game_id, out.version


def test_a_socket_resumed_at_the_highest_version_gets_the_view_there(gateway):
    from websockets.asyncio.client import connect

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, version = await _started(gw)
            async with connect(f"{gw.ws_url}/v1/games/{gid}/ws?since={version}") as ws:
                with anyio.fail_after(15):
                    first = json.loads(await ws.recv())
            assert first["type"] == "view" and first["version"] == version, first
            assert first["view"]["version"] == version
            # from an older version: the feed entries after it, then the view, nothing twice
            async with connect(f"{gw.ws_url}/v1/games/{gid}/ws?since={version - 2}") as ws:
                got = []
                with anyio.fail_after(15):
                    while not got or got[-1]["type"] != "view":
                        got.append(json.loads(await ws.recv()))
            assert [(m["type"], m["version"]) for m in got] == [("feed", version - 1), ("feed", version), ("view", version)]

    anyio.run(main)


def test_a_socket_resumed_past_the_games_version_gets_the_view_and_the_feed_from_there(gateway):
    """``since`` beyond the game's version (a client that saw writes a failover lost): the current
    view at once, then the feed entries of the game's next move (the socket sat silent; a
    breaker's finding)."""
    from websockets.asyncio.client import connect

    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 2)
            a = await gw.join(g.game_id, "a")
            await gw.join(g.game_id, "b")
            version = (await a.start()).version
            await a.wait_view(version)
            async with connect(f"{gw.ws_url}/v1/games/{g.game_id}/ws?since={version + 1}") as ws:
                # one past the head: the view there once, even when woken again before a move
                with anyio.fail_after(15):
                    assert json.loads(await ws.recv())["version"] == version
                await a.view()  # a read in between; nothing moved
                with anyio.move_on_after(1.0):  # nothing else may come (a repeat came here)
                    extra = json.loads(await ws.recv())
                    raise AssertionError(f"sent again: {extra}")
            async with connect(f"{gw.ws_url}/v1/games/{g.game_id}/ws?since=0") as early:
                # another socket of the game read from 0: its snapshot (shared) holds the entry at
                # the game's version, and the socket past the head must not get it from there
                with anyio.fail_after(15):
                    while json.loads(await early.recv())["type"] != "view":
                        pass
                async with connect(f"{gw.ws_url}/v1/games/{g.game_id}/ws?since={version + 1000}") as ws:
                    with anyio.fail_after(15):
                        first = json.loads(await ws.recv())
                    assert (first["type"], first["version"]) == ("view", version), first
            async with connect(f"{gw.ws_url}/v1/games/{g.game_id}/ws?since={version + 1000}") as ws:
                with anyio.fail_after(15):
                    first = json.loads(await ws.recv())
                assert (first["type"], first["version"]) == ("view", version), first
                out = await a.submit({"type": "abandon"})  # a forfeit: the game moves on (and ends)
                got = []
                with anyio.fail_after(15):
                    while not got or got[-1]["type"] != "view":
                        got.append(json.loads(await ws.recv()))
            assert [m["version"] for m in got if m["type"] == "feed"] == list(range(version + 1, out.version + 1)), got
            assert got[-1]["version"] == out.version

    anyio.run(main)


def test_a_client_closing_its_socket_is_not_logged_as_redis_unavailable(gateway, capfd):
    from websockets.asyncio.client import connect

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, _ = await _started(gw)
            url = f"{gw.ws_url}/v1/games/{gid}/ws?since=0"
            for k in range(30):  # closed cleanly or dropped, after reading a frame or before
                ws = await connect(url)
                if k % 3 == 0:
                    await ws.recv()
                if k % 2:
                    ws.transport.abort()
                else:
                    await ws.close()
            socks = [await connect(url) for _ in range(30)]
            for s in socks:
                s.transport.abort()
            # every socket is accounted for once closed (the gauge of /metrics)
            with anyio.fail_after(20):
                while True:
                    text = (await gw.http.get(gateway.url + "/metrics")).text
                    open_ = [ln for ln in text.splitlines() if ln.startswith("questhall_gateway_sockets{")]
                    if all(float(ln.rsplit(" ", 1)[1]) == 0 for ln in open_):
                        break
                    await anyio.sleep(0.05)

    anyio.run(main)
    cap = capfd.readouterr()
    logged = cap.out + cap.err
    assert "socket_redis_unavailable" not in logged and "socket_failed" not in logged


@pytest.mark.parametrize("name", ["\u3164", "\u115f", "\u1160", "\uffa0", "\u3164\u3164 \u3164", " \u2800 ", "\uffa0\u0301"])
def test_a_name_of_blank_fillers_is_refused(name):
    with pytest.raises(Rejection) as exc:
        clean_name(name)
    assert exc.value.code == "bad_name"


def test_a_name_with_a_filler_beside_a_visible_character_is_kept():
    assert clean_name("A\u3164") == "A\u1160"  # NFKC folds U+3164 to U+1160; the A is visible
    assert clean_name("한글") == "한글"


def test_a_join_named_with_a_hangul_filler_is_refused_by_the_gateway(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 2)
            with pytest.raises(GatewayError) as exc:
                await gw.join(g.game_id, "\u3164")
            assert exc.value.status == 422 and exc.value.code == "bad_name", exc.value

    anyio.run(main)


def _first_lines(args: list[str], env: dict[str, str], want: str, timeout: float = 60) -> tuple[str, int | None]:
    """Run ``questhall ARGS`` until a line containing ``want`` (or its exit); its output so far and exit code."""
    proc = subprocess.Popen([sys.executable, "-m", "services.cli", *args], cwd=env["QUESTHALL_DATA"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    deadline = time.monotonic() + timeout
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line)
            if want in line or time.monotonic() > deadline:
                break
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=20)
    return "".join(seen), proc.returncode


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update({"PYTHONPATH": str(ROOT), "QUESTHALL_LOG": "json", "QUESTHALL_DATA": str(tmp_path), **extra})
    return env


def test_a_service_says_which_redis_it_uses_and_warns_of_the_fallback(tmp_path):
    """No Redis command is sent: the gateway connects on its first request, and none is made."""
    out, _ = _first_lines(["gateway", "--port", "0"], _env(tmp_path), "redis_in_use")
    line = json.loads(next(ln for ln in out.splitlines() if "redis_in_use" in ln))
    assert line["level"] == "warning" and line["url"] == "redis://127.0.0.1:6379/0", line
    assert "REDIS_URL is unset" in line["source"]
    out, _ = _first_lines(["gateway", "--port", "0"], _env(tmp_path, REDIS_URL="redis://u:s3cret@127.0.0.1:1/0"),
                          "redis_in_use")
    line = json.loads(next(ln for ln in out.splitlines() if "redis_in_use" in ln))
    assert line["level"] == "info" and line["source"] == "REDIS_URL", line
    assert line["url"] == "redis://u:***@127.0.0.1:1/0" and "s3cret" not in out
