"""Issue 13 defects through the real gateway: seat ownership from the log (the worker killed while
a join is in flight), seat-less join retries, command ids reused with another body, client
strings, forfeit and the operator's end of a game."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import anyio.from_thread
import pytest

from services.adapters.redis_store import Settings, connect
from services.gateway.server import gateway_running
from services.sdk import Gateway, GatewayError
from tests.gateway.conftest import ADMIN, Running, make_config
from tests.procs import ROOT, kill9, spawn, stop


@pytest.fixture
def bare_gateway(redis_url: str, tmp_path) -> Iterator[tuple[Running, list]]:
    """A gateway with no services of its own (workers and projector are subprocesses the test runs)."""
    settings = Settings(url=redis_url, namespace=f"gt{uuid.uuid4().hex[:10]}", partitions=2)
    config = make_config(command_timeout=2.0)
    procs: list = []
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(gateway_running(settings, config, services=False)) as port:
            yield Running(f"http://127.0.0.1:{port}", settings, config), procs
    for p in procs:
        stop(p)


async def _until(pred, timeout: float = 20.0):
    with anyio.fail_after(timeout):
        while True:
            got = await pred()
            if got:
                return got
            await anyio.sleep(0.05)


def test_a_join_that_times_out_still_voids_the_previous_holders_token(bare_gateway, tmp_path):
    """Alice joins seat 0 and leaves; Bob's join of seat 0 is read by a worker that is then killed
    (504). A restarted worker appends Bob's join: from then on Alice's old token can neither
    start the game, nor read seat 0, nor play for it: ownership comes from the join event."""
    gwr, procs = bare_gateway
    s = gwr.settings
    log = tmp_path / "svc.log"
    procs.append(spawn(s, "projector", "--min-idle-ms", "500", log=log))
    w1 = spawn(s, "worker", "--title", "questeros", log=log)
    procs.append(w1)

    async def main():
        async with Gateway(gwr.url) as gw:
            gid = f"g{uuid.uuid4().hex[:8]}"
            # the worker may still be starting: the create is retried under its command id
            g = await _retry(lambda: gw.create("questeros", 2, game_id=gid, command_id="create-1"))
            alice = await gw.join(g.game_id, "Alice", seat=0)
            await alice.submit({"type": "leave"})
            kill9(w1)
            procs.append(spawn(s, "worker", "--title", "questeros", "--min-idle-ms", "500", faults="hang_after_read", log=log))
            r = connect(s.url)
            try:
                with pytest.raises(GatewayError) as e:
                    await gw.join(g.game_id, "Bob", seat=0, command_id="bob-join-1")
                assert (e.value.status, e.value.code) == (504, "outcome_timeout")
                # the hanging worker holds Bob's join pending: kill it while the join is in flight
                p = s.keys.partition(g.game_id)
                stream = s.keys.commands(p, "questeros")

                async def held() -> bool:
                    try:
                        return (await r.xpending(stream, "worker:questeros"))["pending"] == 1
                    except Exception:  # noqa: BLE001 - the group may not exist yet
                        return False

                await _until(held)
                kill9(procs[-1])
                procs.append(spawn(s, "worker", "--title", "questeros", "--min-idle-ms", "500", log=log))
                events = s.keys.game(g.game_id, "events")
                await _until(lambda: r.xlen(events), 1)
                await _until(lambda: _has(r, events, b"seat_joined", 2))
            finally:
                await r.aclose()
            # Alice's token is void though the gateway never saw the join's outcome
            for call in (alice.start, alice.view, lambda: alice.submit({"type": "questeros.bid", "quests": 1})):
                with pytest.raises(GatewayError) as e:
                    await call()
                assert (e.value.status, e.value.code) == (401, "token_revoked"), e.value
            bob = await gw.join(g.game_id, "Bob", seat=0, command_id="bob-join-1")  # the retry gets Bob's token
            carol = await _retry(lambda: gw.join(g.game_id, "Carol", command_id="carol-1"))
            assert carol.seat == 1
            out = await bob.start()
            assert (await bob.wait_view(out.version))["seat"] == 0

    anyio.run(main)


async def _retry(call, timeout: float = 30.0):
    """``call()`` again while it times out (504): an idempotent request before the worker is up."""
    with anyio.fail_after(timeout):
        while True:
            try:
                return await call()
            except GatewayError as exc:
                if exc.code != "outcome_timeout":
                    raise


async def _has(r, key: str, tag: bytes, n: int) -> bool:
    return sum(tag in f[b"e"] for _, f in await r.xrange(key)) >= n


def test_trust_defects(gateway):
    """Seat-less join retried, a command id reused with another body, strings, forfeit, admin end."""
    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 3)
            a1 = await gw.join(g.game_id, "Ann", command_id="ann-join")
            a2 = await gw.join(g.game_id, "Ann", command_id="ann-join")  # a retry: the same seat and token
            assert (a1.seat, a1.token) == (a2.seat, a2.token) == (0, a1.token)
            lobby = await _until(lambda: _lobby(gw, g.game_id))
            assert lobby.names == ["Ann", None, None]
            with pytest.raises(GatewayError) as e:  # the same id with another body
                await gw.join(g.game_id, "Mallory", command_id="ann-join")
            assert (e.value.status, e.value.code) == (409, "command_id_reused")
            b = await gw.join(g.game_id, "\uff22\uff4f\uff42")  # fullwidth: stored as NFKC "Bob"
            assert b.name == "Bob"
            for bad in ("Eve\x1b[31m", "Eve\r\nBob", "\u200b\u200b"):
                with pytest.raises(GatewayError) as e:
                    await gw.join(g.game_id, bad)
                assert (e.value.status, e.value.code) == (422, "bad_name")
            with pytest.raises(GatewayError) as e:
                await gw.join(g.game_id, "Eve", client_seed="ab\n")
            assert (e.value.status, e.value.code) == (422, "bad_client_seed")
            c = await gw.join(g.game_id, "Cy")
            out = await a1.start()
            await a1.wait_view(out.version)
            view = await a1.view()
            mover = {0: a1, 1: b, 2: c}[view["to_move"][0]]
            v = view["version"]
            first = await mover.submit({"type": "questeros.bid", "quests": 1}, command_id="bid-1", expected_version=v)
            again = await mover.submit({"type": "questeros.bid", "quests": 1}, command_id="bid-1", expected_version=v)
            assert again.version == first.version  # a retry: the first outcome
            with pytest.raises(GatewayError) as e:
                await mover.submit({"type": "questeros.bid", "quests": 0}, command_id="bid-1", expected_version=v)
            assert (e.value.status, e.value.code) == (409, "command_id_reused")
            with pytest.raises(GatewayError) as e:
                await b.submit({"type": "abandon", "reason": "gg\x1b[2J"})
            assert (e.value.status, e.value.code) == (422, "bad_reason")
            out = await b.submit({"type": "abandon", "reason": "losing"})  # a forfeit: the others win
            await a1.wait_view(out.version)
            res = await gw.result(g.game_id)
            assert res.winners == [0, 2], res
            assert c.seat == 2

            g2 = await gw.create("questeros", 2)
            x, _ = await gw.join(g2.game_id, "X"), await gw.join(g2.game_id, "Y")
            await x.start()
            for token in (None, "wrong"):
                with pytest.raises(GatewayError) as e:
                    await gw.request("POST", f"/admin/games/{g2.game_id}/end", token=token, body={"reason": "stuck"})
                assert e.value.status == 401
            out = await gw.request("POST", f"/admin/games/{g2.game_id}/end", token=ADMIN, body={"reason": "worker bug"})
            env = await x.wait_view(out["version"])
            assert env["status"] == "abandoned"
            feed = await gw.spectator_feed(g2.game_id)
            assert {"type": "game_abandoned", "seat": None, "reason": "worker bug"} in [f["body"] for f in feed]

    anyio.run(main)


async def _lobby(gw, gid):
    try:
        lg = await gw.game(gid)
    except GatewayError:
        return None
    return lg if lg.taken >= 1 else None


assert ROOT.exists()


def test_the_worker_refuses_unsigned_and_badly_signed_commands_of_a_keyed_seat(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 2)
            a, b = await gw.join(g.game_id, "A"), await gw.join(g.game_id, "B", seat_key=False)
            assert a.key is not None and b.key is None
            head = await a.head()
            path = f"/games/{g.game_id}/seats/0/commands"
            with pytest.raises(GatewayError) as e:  # no signature
                await gw.request("POST", path, token=a.token, body={"command": {"type": "start"}})
            assert (e.value.status, e.value.code) == (409, "signature_required")
            forged = a.sign({"type": "start"}, head["version"] + 1)  # signed at another version
            with pytest.raises(GatewayError) as e:
                await gw.request("POST", path, token=a.token, body={"command": {"type": "start"}, "signature": forged,
                                                                      "expected_version": head["version"]})
            assert (e.value.status, e.value.code) == (409, "bad_signature"), e.value
            out = await a.start()  # the SDK signs at the head
            assert out.version > head["version"] and out.receipt is not None
            keys = await gw.keys()
            assert out.receipt.key_id in {k["key_id"] for k in keys}

    anyio.run(main)


def test_a_create_refused_by_its_worker_has_a_receipt_at_version_0_and_a_gateway_refusal_none(gateway):
    """Ruling (docs/fairness.md "Receipts"): a rule rejection a worker decided carries the signed
    head it was decided on, for a refused create the empty game's (version 0, the genesis hash:
    the id holds no game, its reads answer game_not_found); a refusal the gateway makes before any
    worker decides (an unknown title) carries none."""
    from services.kernel.hashing import GENESIS

    async def main():
        async with Gateway(gateway.url) as gw:
            with pytest.raises(GatewayError) as unknown:
                await gw.create("nope", 2)
            with pytest.raises(GatewayError) as refused:
                await gw.create("questeros", 99, game_id="grefused99")
            with pytest.raises(GatewayError) as missing:
                await gw.game("grefused99")
            keys = await gw.keys()
            return unknown.value, refused.value, missing.value, keys, await gw.verify_receipts("grefused99")

    unknown, refused, missing, keys, (valid, kept) = anyio.run(main)
    assert (unknown.code, unknown.receipt) == ("unknown_title", None)
    assert refused.code == "bad_seats" and refused.receipt is not None
    assert (refused.receipt["game_id"], refused.receipt["version"], refused.receipt["head_hash"]) == ("grefused99", 0, GENESIS)
    assert refused.receipt["key_id"] in {k["key_id"] for k in keys}
    assert (valid, kept) == (1, 1)  # the SDK kept the refusal's receipt, and it verifies
    assert missing.code == "game_not_found"
