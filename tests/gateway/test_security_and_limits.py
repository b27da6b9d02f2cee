"""Seat isolation, tokens, limits and error bodies of the real gateway (real Redis, real sockets)."""

from __future__ import annotations

import functools
import json
import random
import time
import uuid
from pathlib import Path

import anyio
import msgspec
import pytest
from websockets.exceptions import ConnectionClosed

from schemas.questeros import Bid
from services.adapters.redis_store import EventStore, Settings, connect
from services.gateway import tokens
from services.kernel import codec, get_title
from services.kernel import game as lifecycle
from services.sdk import BotStats, Gateway, GatewayError, Subscription, play_seat
from tests.gateway.conftest import ADMIN, KEYS, make_config, run_gateway, strings


async def _seated(gw: Gateway, title: str = "questeros", seats: int = 2, start: bool = True):
    g = await gw.create(title, seats)
    clients = [await gw.join(g.game_id, f"p{i}") for i in range(seats)]
    if start:
        out = await clients[0].start()
        await clients[0].wait_view(out.version)
    return g.game_id, clients


def _refused(exc: pytest.ExceptionInfo, status: int, code: str) -> None:
    assert exc.value.status == status and exc.value.code == code, (exc.value.status, exc.value.code)


def test_the_owner_token_on_a_seat_path_is_the_wrong_token_and_an_unknown_socket_message_a_bad_message(gateway):
    """The owner's token on a seat path, any seat (also one no join has, -1): 403
    ``token_wrong_seat`` naming the owner token (seat -1 answered 401 ``token_revoked``, "its
    holder left the seat": a newcomer's finding). A socket message of no known type:
    ``{"type": "error", "code": "bad_message"}``, the socket kept open (a ping still answered)."""
    from websockets.asyncio.client import connect as ws_connect

    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 2)
            for seat in (0, 1, -1):
                with pytest.raises(GatewayError) as e:
                    await gw.seat(g.game_id, seat, g.owner_token).view()
                _refused(e, 403, "token_wrong_seat")
                assert "owner token" in e.value.message
            async with ws_connect(f"{gateway.url.replace('http', 'ws')}/v1/games/{g.game_id}/ws") as ws:
                await ws.send(json.dumps({"type": "nope"}))
                await ws.send(json.dumps({"type": "ping"}))
                got = []
                with anyio.fail_after(10):
                    while not got or got[-1]["type"] != "pong":
                        got.append(json.loads(await ws.recv()))
            errors = [m for m in got if m["type"] == "error"]
            assert [m["code"] for m in errors] == ["bad_message"], got

    anyio.run(main)


def test_a_seat_token_can_do_nothing_as_another_seat_or_game(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, b) = await _seated(gw)
            other_gid, (c, _) = await _seated(gw, start=False)
            as_b = gw.seat(gid, 1, a.token)  # seat A's token, seat B's paths
            with pytest.raises(GatewayError) as e:
                await as_b.view()
            _refused(e, 403, "token_wrong_seat")
            with pytest.raises(GatewayError) as e:
                await as_b.feed()
            _refused(e, 403, "token_wrong_seat")
            with pytest.raises(GatewayError) as e:
                await as_b.submit(Bid(quests=1))
            _refused(e, 403, "token_wrong_seat")
            with pytest.raises(ConnectionClosed) as ce:
                async with as_b.subscribe() as sub:
                    await sub.recv(timeout=5)
            assert ce.value.rcvd.code == 4403
            # another game's token
            with pytest.raises(GatewayError) as e:
                await gw.seat(gid, 0, c.token).view()
            _refused(e, 403, "token_wrong_game")
            # missing, forged, unknown-key and expired tokens
            with pytest.raises(GatewayError) as e:
                await gw.request("GET", f"/games/{gid}/seats/0/view")
            _refused(e, 401, "token_missing")
            head, payload, sig = a.token.split(".")
            claims = json.loads(tokens._unb64(payload))
            claims["s"] = 1
            forged = f"{head}.{tokens._b64(json.dumps(claims).encode())}.{sig}"
            with pytest.raises(GatewayError) as e:
                await gw.seat(gid, 1, forged).view()
            _refused(e, 401, "token_invalid")
            foreign = tokens.issue((b"not-our-key",), gateway.settings.namespace, gid, 1, "x", 60)
            with pytest.raises(GatewayError) as e:
                await gw.seat(gid, 1, foreign).view()
            _refused(e, 401, "token_invalid")
            expired = tokens.issue(KEYS, gateway.settings.namespace, gid, 0, "x", 60, now=time.time() - 120)
            with pytest.raises(GatewayError) as e:
                await gw.seat(gid, 0, expired).view()
            _refused(e, 401, "token_expired")
            # key rotation: a token signed by the previous key still works
            rotated = tokens.issue((KEYS[1],), gateway.settings.namespace, gid, 0, "p0", 60,
                                   join_version=tokens.verify(KEYS, gateway.settings.namespace, a.token).j)
            assert (await gw.seat(gid, 0, rotated).view())["seat"] == 0
            # the spectator socket and view carry no hand and no legal commands
            async with gw.spectate(gid) as sub:
                msg = await sub.recv(timeout=5)
                while msg["type"] != "view":
                    msg = await sub.recv(timeout=5)
            assert msg["view"]["seat"] is None and msg["view"]["view"]["hand"] == [] and msg["view"]["view"]["legal"] == []
            # admin endpoints
            with pytest.raises(GatewayError) as e:
                await gw.rebuild("wrong")
            _refused(e, 401, "admin_token_invalid")
            with pytest.raises(GatewayError) as e:
                await gw.rebuild(a.token)
            _refused(e, 401, "admin_token_invalid")
            assert await gw.rebuild(ADMIN) >= 2

    anyio.run(main)


def test_rule_rejections_errors_and_idempotent_retries(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, b) = await _seated(gw)
            view = await a.view()
            to_move = view["to_move"][0]
            idle = [a, b][1 - to_move]
            with pytest.raises(GatewayError) as e:
                await idle.submit(Bid(quests=1))
            _refused(e, 409, "not_your_turn")
            assert e.value.version == view["version"] and e.value.message.endswith(".")
            mover = [a, b][to_move]
            first = await mover.submit(Bid(quests=2), command_id="my-bid-1")
            again = await mover.submit(Bid(quests=2), command_id="my-bid-1")  # a retry: the first outcome
            assert (first.version, first.events) == (again.version, again.events) and first.events >= 1
            with pytest.raises(GatewayError) as e:  # another command under a used id (issue 13)
                await mover.submit(Bid(quests=3), command_id="my-bid-1")
            _refused(e, 409, "command_id_reused")
            with pytest.raises(GatewayError) as e1:
                await idle.submit(Bid(quests=99), command_id="bad-1")
            with pytest.raises(GatewayError) as e2:
                await idle.submit(Bid(quests=99), command_id="bad-1")
            assert (e1.value.code, e1.value.version) == (e2.value.code, e2.value.version)
            # another title's command, or a type no title has: 422 bad_command naming the title's command types,
            # without a version (the worker's refusal said "version": 0 of a game at v8; "nope" was a 400
            # invalid_request, where docs/gateway.md says 422); malformed bodies: 400; unknown game: 404
            with pytest.raises(GatewayError) as e:
                await mover.submit({"type": "orion_duel.choose_starter", "seat": 0})
            _refused(e, 422, "bad_command")
            assert e.value.version is None and "questeros.bid" in e.value.message, e.value
            assert "'orion_duel.choose_starter'" in e.value.message
            with pytest.raises(GatewayError) as e:
                await gw.request("POST", f"/games/{gid}/seats/0/commands", token=a.token, body={"command": {"type": "nope"}})
            _refused(e, 422, "bad_command")
            assert e.value.version is None and "'nope'" in e.value.message and "questeros.bid" in e.value.message
            for body in ({"command": {"type": "questeros.bid", "quests": "three"}},
                         {"command": {"type": "questeros.bid", "quests": 1}, "extra": 1}, [1, 2]):
                with pytest.raises(GatewayError) as e:
                    await gw.request("POST", f"/games/{gid}/seats/0/commands", token=a.token, body=body)
                _refused(e, 400, "invalid_request")
            resp = await gw.http.post(f"/games/{gid}/seats/0/commands", content=b"{not json",
                                      headers={"Authorization": f"Bearer {a.token}", "Content-Type": "application/json"})
            assert resp.status_code == 400 and resp.json()["code"] == "invalid_request"
            with pytest.raises(GatewayError) as e:
                await gw.create("questeros", 9)
            _refused(e, 422, "bad_seats")
            with pytest.raises(GatewayError) as e:
                await gw.create("chess", 2)
            _refused(e, 404, "unknown_title")
            with pytest.raises(GatewayError) as e:
                await gw.spectator_view("no-such-game")
            _refused(e, 404, "game_not_found")
            with pytest.raises(GatewayError) as e:
                await gw.spectator_view("bad id!")
            _refused(e, 400, "bad_game_id")
            with pytest.raises(GatewayError) as e:
                await gw.result(gid)
            _refused(e, 404, "no_result")
            with pytest.raises(GatewayError) as e:
                await gw.join(gid, "late")
            _refused(e, 409, "not_in_lobby")
            resp = await gw.http.post("/games", content=b'{"title":"questeros","seats":2,"options":{"x":"' + b"a" * 20000 + b'"}}',
                                      headers={"Content-Type": "application/json"})
            assert resp.status_code == 413 and resp.json()["code"] == "body_too_large"
            for r in (resp,):
                assert "Traceback" not in r.text
            metrics = (await gw.http.get(gateway.url + "/metrics")).text
            assert 'questhall_gateway_commands_total{outcome="accepted",title="questeros"}' in metrics
            assert 'questhall_gateway_commands_total{outcome="rejected",title="questeros"}' in metrics
            assert "questhall_gateway_command_seconds_bucket" in metrics
            assert 'questhall_consumer_group_lag{group="projector"}' in metrics
            assert "questhall_projection_lag " in metrics

    anyio.run(main)


def test_rate_and_websocket_message_limits(gateway):
    """A second gateway replica on the same namespace with tight limits (no services of its own)."""
    tight = make_config(rate_per_seat=3, rate_window=30, ws_max_message=512)

    async def main(url: str):
        async with Gateway(gateway.url) as main_gw, Gateway(url) as gw:
            gid, (a, b) = await _seated(main_gw)
            a2 = gw.seat(gid, a.seat, a.token)
            codes = []
            for _ in range(5):
                try:
                    await a2.submit(Bid(quests=1))
                    codes.append("ok")
                except GatewayError as exc:
                    codes.append(exc.code)
            assert codes[3:] == ["rate_limited", "rate_limited"], codes
            async with a2.subscribe() as sub:
                await sub.send({"type": "ping"})
                got = [await sub.recv(timeout=5) for _ in range(2)]
                while not any(m["type"] == "pong" for m in got):
                    got.append(await sub.recv(timeout=5))
                await sub.send({"type": "ping", "pad": "x" * 2000})
                with pytest.raises(ConnectionClosed) as ce:
                    while True:
                        await sub.recv(timeout=5)
                assert ce.value.rcvd.code == 1009

    for running in run_gateway(gateway.settings, tight):
        pass_url = running.url
        anyio.run(main, pass_url)


def test_reconnect_misses_nothing_and_gets_nothing_twice(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, clients = await _seated(gw, "questeros", 2)
            t = get_title("questeros")
            got: list[int] = []
            views: list[int] = []

            async def observe(since: int, stop_at: int | None) -> int:
                async with clients[0].subscribe(since) as sub:
                    while True:
                        m = await sub.recv(timeout=30)
                        if m["type"] == "feed":
                            got.append(m["version"])
                        elif m["type"] == "view":
                            views.append(m["version"])
                            if stop_at is not None and m["version"] >= stop_at:
                                return sub.last_version
                            if m["view"]["status"] == "finished":
                                return sub.last_version

            async with anyio.create_task_group() as tg:
                for i, c in enumerate(clients):
                    tg.start_soon(play_seat, c, t.bots["random"], t.view_type, random.Random(i), BotStats())
                last = await observe(0, stop_at=30)
                # dropped: the game goes on without this socket
                with anyio.fail_after(30):
                    while (await gw.spectator_view(gid))["version"] < last + 20:
                        await anyio.sleep(0.02)
                await observe(last, stop_at=None)
            feed = await clients[0].feed(limit=1000)
            expected = [e["version"] for e in feed if e["version"] <= got[-1]]
            assert got == expected, "missed or duplicated feed entries across the reconnect"
            assert views == sorted(set(views))

    anyio.run(main)


def test_no_payload_of_seat_a_or_a_spectator_holds_a_hidden_card_or_the_seed(gateway):
    """Capture every socket and HTTP payload of seat 0 and a spectator during a 3-seat game of
    Questeros; check each against the true hidden cards at its version (other hands, deck)."""

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, clients = await _seated(gw, "questeros", 3)
            t = get_title("questeros")
            captured: dict[str | int, list[dict]] = {0: [], "spec": []}

            async def spectate():
                async with gw.spectate(gid) as sub:
                    while True:
                        m = await sub.recv(timeout=60)
                        captured["spec"].append(m)
                        if m["type"] == "view" and m["view"]["status"] == "finished":
                            return

            stats = BotStats()
            async with anyio.create_task_group() as tg:
                tg.start_soon(spectate)
                for i, c in enumerate(clients):
                    tg.start_soon(functools.partial(play_seat, c, t.bots["random"], t.view_type, random.Random(i), stats, capture=(i == 0)))
            captured[0] = stats.messages[0]
            final = (await gw.spectator_view(gid))["version"]
            captured[0] += [{"type": "feed", "version": e["version"], "entry": e} for e in await clients[0].feed(limit=1000)]
            captured["spec"] += [{"type": "feed", "version": e["version"], "entry": e} for e in await gw.spectator_feed(gid, limit=1000)]

        r = connect(gateway.settings.url)
        try:
            c = codec("questeros")
            events = await EventStore(r, gateway.settings).read_events(c, gid)
        finally:
            await r.aclose()
        states = {}
        game = None
        for e in events:
            game = lifecycle.fold(c.title, [e], game)
            states[e.version] = game
        seed = next(e.body.seed for e in events if e.body.__struct_config__.tag == "seed_revealed")
        seed_version = next(e.version for e in events if e.body.__struct_config__.tag == "seed_revealed")
        looked = {card for e in events if e.body.__struct_config__.tag == "questeros.hand_looked_at" and e.body.seat == 0
                  for card in e.body.cards}
        checked = 0
        for who, msgs in captured.items():
            for m in msgs:
                v = m["version"]
                rules = states[v].rules
                if rules is None or not rules.hands:
                    continue
                others = [h for s, h in enumerate(rules.hands) if who == "spec" or s != who]
                hidden = {card for h in others for card in h} | (set(rules.deck) - PUBLIC_EPICS)
                if who == 0:
                    hidden -= looked
                seen = set(strings(m))
                assert not (seen & hidden), f"{who} at v{v} saw hidden cards {sorted(seen & hidden)}"
                text = json.dumps(m)
                if v < seed_version:
                    assert seed not in text and '"seed"' not in text
                checked += 1
        assert checked > 100 and final >= seed_version

    anyio.run(main)


PUBLIC_EPICS = {f"e{i}" for i in range(10, 16)}
"""Set aside face up and added to the deck publicly (``epic_added``): the deck order stays secret."""


def test_audit_endpoints_public_only_when_over_admin_any_time(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            created = await gw.create("questeros", 2)
            gid = created.game_id
            for _ in range(2):
                await gw.join(gid, "P")
            for path in (f"/games/{gid}/audit", f"/games/{gid}/bundle"):
                with pytest.raises(GatewayError) as e:
                    await gw.request("GET", path)
                _refused(e, 409, "game_not_over")
            with pytest.raises(GatewayError) as e:
                await gw.request("GET", f"/admin/games/{gid}/audit", token="wrong")
            _refused(e, 401, "admin_token_invalid")
            verdict = await gw.audit(gid, admin_token=ADMIN)
            assert verdict["status"] == "pending" and not verdict["seed_verified"]
            with pytest.raises(GatewayError) as e:
                await gw.audit("no-such-game")
            _refused(e, 404, "no_such_game")

    anyio.run(main)


def test_token_module_round_trip_and_rotation():
    tok = tokens.issue((b"new", b"old"), "ns", "g1", 2, "Ann", 60)
    assert tokens.verify((b"new",), "ns", tok).s == 2
    old = tokens.issue((b"old",), "ns", "g1", 2, "Ann", 60)
    assert tokens.verify((b"new", b"old"), "ns", old).g == "g1"
    with pytest.raises(tokens.TokenError):
        tokens.verify((b"new",), "ns", old)
    with pytest.raises(tokens.TokenError):
        tokens.verify((b"new", b"old"), "other-ns", tok)
    for junk in ("", "a.b", "qh1.!!.??", "qh1." + "a" * 3000 + ".b", f"qh1.{uuid.uuid4().hex}.x"):
        with pytest.raises(tokens.TokenError):
            tokens.verify((b"new",), "ns", junk)
    assert msgspec.json.decode(tokens._unb64(tok.split(".")[1]))["n"] == "Ann"


_ = Subscription  # the SDK type used through helpers


def test_commands_sent_over_the_seat_socket_get_their_outcome(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, clients = await _seated(gw, "questeros", 2)
            view = await clients[0].view()
            bidder = view["to_move"][0]
            other = 1 - bidder

            async def outcomes(s, n):
                got = []
                while len(got) < n:
                    m = await s.recv(timeout=20)
                    if m["type"] == "outcome":
                        got.append(m)
                return got

            async with clients[bidder].subscribe(view["version"]) as sub, clients[other].subscribe(view["version"]) as osub:
                bid = {"type": "questeros.bid", "quests": 1}
                await osub.send(clients[other].ws_command(bid, "ws-out-of-turn", view["version"]))
                theirs = await outcomes(osub, 1)
                await sub.send(clients[bidder].ws_command(bid, "ws-bid", view["version"]))  # signed (seat key)
                await sub.send(clients[bidder].ws_command(bid, "ws-bid", view["version"]))
                mine = await outcomes(sub, 2)
            assert theirs[0]["status"] == "rejected" and theirs[0]["code"] == "not_your_turn", theirs
            assert [m["status"] for m in mine] == ["accepted", "accepted"] and mine[0]["version"] == mine[1]["version"], mine
            await clients[bidder].wait_view(mine[0]["version"])
            feed = await clients[bidder].feed(after=view["version"])
            assert [e["body"]["type"] for e in feed].count("questeros.bid_made") == 1

    anyio.run(main)


def test_a_saturated_gateway_refuses_commands_fast_with_503_and_retry_after(gateway):
    """A replica whose in-flight bound is reached (here 0: every outcome would exceed it) refuses
    a submit at once with 503 overloaded + Retry-After, over a socket with close 1013, and
    sends nothing: the game does not move, and the seat's rate count does not move either (the
    bound is checked before the rate check's round trip: a saturated replica does no Redis work
    for a command it refuses)."""
    full = make_config(max_in_flight=0)

    async def rate_counts(r, gid: str) -> dict:
        return {key: await r.get(key) async for key in r.scan_iter(match=f"*:gw:rate:{gid}:*")}

    async def main(url: str):
        r = connect(gateway.settings.url)
        async with Gateway(gateway.url) as main_gw, Gateway(url) as gw:
            gid, seated = await _seated(main_gw)
            a = seated[(await seated[0].view())["to_move"][0]]  # the first bidder is drawn
            await a.submit(Bid(quests=1))  # counted: the seat has a rate count
            meta = gateway.settings.keys.game(gid, "meta")
            before = int(await r.hget(meta, "version"))  # the game's own version (a view may lag)
            counted = await rate_counts(r, gid)
            assert counted
            a2 = gw.seat(gid, a.seat, a.token)
            with pytest.raises(GatewayError) as exc:
                await a2.submit(Bid(quests=1))
            _refused(exc, 503, "overloaded")
            assert exc.value.retry_after == 1
            assert await rate_counts(r, gid) == counted
            async with a2.subscribe() as sub:
                await sub.send({"type": "command", "command": {"type": "questeros.bid", "quests": 1}, "command_id": "x1"})
                with pytest.raises(ConnectionClosed) as ce:
                    while True:
                        await sub.recv(timeout=5)
                assert ce.value.rcvd.code == 1013
            assert int(await r.hget(meta, "version")) == before  # nothing was sent
        await r.aclose()

    for running in run_gateway(gateway.settings, full):
        anyio.run(main, running.url)


def test_a_flood_of_socket_commands_over_the_in_flight_bound_is_refused_fast_and_nothing_is_lost(gateway):
    """Issue 11 (the gateway open loop collapsed at 10,000 games): a replica with room for one
    outcome (``max_in_flight=1``) and a socket sending 12 commands at once answers a prefix of
    them, in order, then closes 1013 ``overloaded`` well before the outcome timeout (10 s) -- no
    command left waiting. None is lost: the commands after the refused one are not sent to the bus
    either (before: they were, and their outcomes never reached the socket, so an HTTP retry of
    one got 409 ``command_id_reused``); each unanswered id sent again over HTTP is decided then."""
    tiny = make_config(max_in_flight=1)

    async def main(url: str):
        async with Gateway(gateway.url) as main_gw, Gateway(url) as gw:
            gid, (a, _b) = await _seated(main_gw)
            a2 = gw.seat(gid, a.seat, a.token)
            ids = [f"flood-{i}" for i in range(12)]
            answered: list[str] = []
            t0 = time.monotonic()
            async with a2.subscribe() as sub:
                for cid in ids:
                    await sub.send(a2.ws_command(Bid(quests=1), cid))
                with pytest.raises(ConnectionClosed) as ce:
                    while True:
                        m = await sub.recv(timeout=8)
                        if m.get("type") == "outcome":
                            answered.append(m["command_id"])
            assert ce.value.rcvd.code == 1013, ce.value.rcvd
            assert time.monotonic() - t0 < 8, "the refusal waited for timeouts"
            assert answered == ids[:len(answered)] and len(answered) < len(ids), answered
            for cid in ids[len(answered):]:  # none of them was sent: each is decided now, over HTTP
                try:
                    await a.submit(Bid(quests=1), cid)
                except GatewayError as exc:
                    assert exc.code not in ("overloaded", "outcome_timeout", "command_id_reused"), (cid, exc.code)

    for running in run_gateway(gateway.settings, tiny):
        anyio.run(main, running.url)


def test_the_generated_key_warnings_say_what_they_mean_and_whether_to_act(capfd):
    """Without QUESTHALL_TOKEN_KEYS / QUESTHALL_RECEIPT_KEYS the gateway makes random keys and
    warns once each; a newcomer running ``make demo`` learns from the line that it needs nothing
    there and where deployments read on (docs/operations.md, "Gateway keys")."""
    from services.gateway.app import create_app
    from services.gateway.config import GatewayConfig

    capfd.readouterr()
    create_app(Settings(url="redis://127.0.0.1:1/0"), GatewayConfig(token_keys=(), receipt_keys=()))
    out = capfd.readouterr()
    lines = [ln for ln in (out.out + out.err).splitlines() if "gateway_generated_" in ln]
    assert len(lines) == 2, lines
    for event, var in (("gateway_generated_token_key", "QUESTHALL_TOKEN_KEYS"),
                       ("gateway_generated_receipt_key", "QUESTHALL_RECEIPT_KEYS")):
        (line,) = [ln for ln in lines if event in ln]
        assert f"{var} is not set" in line and "random key" in line, line
        assert "Nothing to do for make demo, make serve or local play" in line, line
        assert "docs/operations.md" in line and "Gateway keys" in line, line
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    assert "## Gateway keys" in doc and "QUESTHALL_TOKEN_KEYS is not set" in doc
    create_app(Settings(url="redis://127.0.0.1:1/0"), GatewayConfig(token_keys=(b"k",), receipt_keys=("0" * 64,)))
    out = capfd.readouterr()
    assert "gateway_generated_" not in out.out + out.err
    # a local run (serve, demo): no structured warning; its one plain line names the variables, no key
    cfg = GatewayConfig(token_keys=(), receipt_keys=()).with_keys()
    noted: list[str] = []
    create_app(Settings(url="redis://127.0.0.1:1/0"), cfg, keys_note=noted.append)
    out = capfd.readouterr()
    assert "gateway_generated_" not in out.out + out.err
    (line,) = noted
    assert line == cfg.generated_keys_line()
    assert line and "QUESTHALL_TOKEN_KEYS and QUESTHALL_RECEIPT_KEYS not set" in line and "Gateway keys" in line
    assert cfg.token_keys[0].decode() not in line and cfg.receipt_keys[0] not in line
    assert GatewayConfig(token_keys=(b"k",), receipt_keys=("0" * 64,)).with_keys().generated_keys_line() is None
