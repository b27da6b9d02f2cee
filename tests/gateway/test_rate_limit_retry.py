"""The SDKs wait out a 429 ``rate_limited`` and send the request again (bounded, opt-out), against
a real gateway whose per-seat limit is 2 commands a second: a burst of dry runs all answered
with retries on (the Python SDK async and sync, the TypeScript SDK in node), the 429 raised at
once with ``rate_limit_retries=0`` / ``rateLimitRetries: 0``, and a ``Retry-After`` beyond the
wait bound raised at once too. Source: issue 19 (docs/clients.md "Rate limits")."""

from __future__ import annotations

import json
import subprocess
import uuid

import anyio
import pytest

from questhall_client import Gateway, GatewayError, rate_limit_waited
from questhall_client.sync import Gateway as SyncGateway
from services.adapters.redis_store import Settings
from tests.gateway.conftest import make_config, run_gateway
from tests.gateway.test_typescript_client import TS_DIR, build_sdk

BURST = 7


@pytest.fixture(scope="module")
def tight(redis_url):
    settings = Settings(url=redis_url, namespace=f"rl{uuid.uuid4().hex[:10]}", partitions=2)
    yield from run_gateway(settings, make_config(rate_per_seat=2, rate_window=1))


async def _seat(gw: Gateway):
    """A solo Ero's Quest game: its seat and a legal command of it."""
    g = await gw.create("eros_quest", 1)
    a = await gw.join(g.game_id, "A", seat_key=False)
    out = await a.start()
    return a, (await a.view(min_version=out.version))["view"]["legal"][0]


def test_the_python_sdk_waits_out_rate_limited_and_can_be_told_not_to(tight):
    async def main():
        async with Gateway(tight.url) as gw:
            a, cmd = await _seat(gw)
            waited0 = rate_limit_waited()
            for _ in range(BURST):
                await a.submit(cmd, dry_run=True)
            assert gw.rate_limit_waits >= 1  # 2 a second: the burst met the limit and waited it out
            # the seconds slept (Retry-After, >= 1 s a wait) are told to this task, for timing without them
            assert rate_limit_waited() - waited0 >= gw.rate_limit_waits
        async with Gateway(tight.url, rate_limit_retries=0) as gw:
            a, cmd = await _seat(gw)
            with pytest.raises(GatewayError) as e:
                for _ in range(BURST):
                    await a.submit(cmd, dry_run=True)
            assert (e.value.status, e.value.code) == (429, "rate_limited") and e.value.retry_after >= 1
            assert gw.rate_limit_waits == 0
        async with Gateway(tight.url, max_retry_wait=0.5) as gw:  # Retry-After is >= 1 s: beyond the bound
            a, cmd = await _seat(gw)
            with pytest.raises(GatewayError) as e:
                for _ in range(BURST):
                    await a.submit(cmd, dry_run=True)
            assert e.value.code == "rate_limited" and gw.rate_limit_waits == 0

    anyio.run(main)


def _sync_seat(gw: SyncGateway):
    g = gw.create("eros_quest", 1)
    a = gw.join(g.game_id, "A", seat_key=False)
    out = a.start()
    return a, a.view(min_version=out.version)["view"]["legal"][0]


def test_the_sync_facade_takes_the_same_options(tight):
    with SyncGateway(tight.url) as gw:
        a, cmd = _sync_seat(gw)
        for _ in range(BURST):
            a.submit(cmd, dry_run=True)
        assert gw.rate_limit_waits >= 1
    with SyncGateway(tight.url, rate_limit_retries=0) as gw:
        a, cmd = _sync_seat(gw)
        with pytest.raises(GatewayError):
            for _ in range(BURST):
                a.submit(cmd, dry_run=True)


SCRIPT = """
import { Gateway, GatewayError } from %(dist)s;
const url = process.env.QUESTHALL_URL;
async function seat(gw) {
  const g = await gw.create("eros_quest", 1);
  const a = await gw.join(g.game_id, { name: "A", seatKey: false });
  const out = await a.start();
  return [a, (await a.view({ minVersion: out.version })).view.legal[0]];
}
const out = {};
let gw = new Gateway(url);
let [a, cmd] = await seat(gw);
for (let i = 0; i < %(burst)d; i++) await a.submit(cmd, { dryRun: true });
out.waits = gw.rateLimitWaits;
gw = new Gateway(url, { rateLimitRetries: 0 });
[a, cmd] = await seat(gw);
try {
  for (let i = 0; i < %(burst)d; i++) await a.submit(cmd, { dryRun: true });
  out.refused = null;
} catch (e) {
  out.refused = e instanceof GatewayError ? [e.status, e.code, e.retryAfter] : String(e);
}
out.waitsOff = gw.rateLimitWaits;
console.log(JSON.stringify(out));
"""


def test_the_typescript_sdk_waits_out_rate_limited_and_can_be_told_not_to(tight, tmp_path):
    node = build_sdk()
    script = tmp_path / "retry.mjs"
    script.write_text(SCRIPT % {"dist": json.dumps((TS_DIR / "dist" / "index.js").as_uri()), "burst": BURST})
    res = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "QUESTHALL_URL": tight.url})
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["waits"] >= 1 and out["waitsOff"] == 0
    assert out["refused"][:2] == [429, "rate_limited"] and out["refused"][2] >= 1
