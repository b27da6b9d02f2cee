"""The TypeScript SDK in a real headless Chromium (issue 19): the browser's own WebSocket (token
in ``?token=``), fetch and WebCrypto Ed25519, two seats of an Orion Duel played to the end from
the views' legal commands, each socket dropped once and resumed by ``since``.

The compiled SDK (``clients/typescript/dist``, built by tests/gateway/test_typescript_client.py's
recipe: ``npm ci`` when needed, then ``tsc``) and ``examples/play.js`` are served by the gateway
itself from a web folder of their own (same origin: no CORS, the pages' strict CSP).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator

import pytest

from services.adapters.redis_store import Settings
from tests.gateway.conftest import Running, make_config, run_gateway
from tests.gateway.test_typescript_client import TS_DIR, build_sdk

SCRIPT = """
const done = arguments[arguments.length - 1];
(async () => {
  const { Gateway } = await import("/sdk/dist/index.js");
  const { playSeat, rng } = await import("/sdk/examples/play.js");
  const gw = new Gateway(location.origin);
  const g = await gw.create("orion_duel", 2);
  const seats = [await gw.join(g.game_id, { name: "A", seat: 0 }), await gw.join(g.game_id, { name: "B", seat: 1 })];
  await seats[0].start();
  const played = await Promise.all(seats.map((s, i) => playSeat(s, { random: rng(7 + i), dropAfter: 4 + i })));
  const feeds = [];
  for (const s of seats) feeds.push((await s.feed({ limit: 200 })).map((e) => e.version));
  const { valid, kept } = await gw.verifyReceipts(g.game_id);
  return { status: played[0].env.status, reconnects: played.map((p) => p.reconnects), accepted: played[0].accepted + played[1].accepted,
           socketFeeds: played.map((p) => p.feed), feeds, valid, kept, audit: (await gw.audit(g.game_id)).status,
           keyed: seats.every((s) => s.key !== null), nodeWs: typeof process !== "undefined" };
})().then(done, (e) => done({ error: String((e && e.stack) || e) }));
"""


@pytest.fixture(scope="module")
def sdk_gateway(redis_url: str, tmp_path_factory) -> Iterator[Running]:
    """A gateway whose web folder holds ``sdk/``: the compiled SDK and the example player."""
    build_sdk()
    web = tmp_path_factory.mktemp("web")
    (web / "sdk").mkdir()
    (web / "sdk" / "index.html").write_text("<!doctype html><meta charset=utf-8><title>SDK</title>\n")
    shutil.copytree(TS_DIR / "dist", web / "sdk" / "dist")
    shutil.copytree(TS_DIR / "examples", web / "sdk" / "examples")
    settings = Settings(url=redis_url, namespace=f"sdkweb{uuid.uuid4().hex[:8]}", partitions=2)
    old = os.environ.get("QUESTHALL_WEB_DIR")
    os.environ["QUESTHALL_WEB_DIR"] = str(web)
    gen = run_gateway(settings, make_config())
    try:
        running = next(gen)
    finally:  # the app read it at creation
        if old is None:
            os.environ.pop("QUESTHALL_WEB_DIR", None)
        else:
            os.environ["QUESTHALL_WEB_DIR"] = old
    yield running
    next(gen, None)  # run the generator to its end: the gateway stops cleanly


def test_the_sdk_plays_a_game_in_chromium(browser, sdk_gateway):
    page = browser.page(f"{sdk_gateway.url}/sdk/")
    page.driver.set_script_timeout(180)
    try:
        got = page._on().execute_async_script(SCRIPT)
    finally:
        page.driver.set_script_timeout(30)
    assert "error" not in got, got.get("error")
    assert got["status"] == "finished" and got["accepted"] > 4 and got["keyed"]
    assert got["nodeWs"] is False  # the browser's WebSocket, not the ws package
    assert got["reconnects"] == [1, 1]
    assert got["socketFeeds"] == got["feeds"]  # resumed by since: every feed entry once
    assert got["kept"] >= got["accepted"] and got["valid"] == got["kept"]
    assert got["audit"] == "valid"
    assert not [e for e in page.console_errors() if "favicon" not in e]
