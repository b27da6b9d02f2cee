"""Adversarial clients against the real gateway (real Redis, real sockets, seeded, bounded).

Bad input gets a 4xx with a stable code and a sentence, never a 5xx; nothing secret (another
seat's hand, the deck order, the seed before the end, seat tokens) leaves through any channel."""

from __future__ import annotations

import anyio
import pytest

from services.adapters.redis_store import connect
from services.sdk import Gateway, GatewayError


async def _seated(gw: Gateway, title: str = "questeros", seats: int = 2, start: bool = True):
    g = await gw.create(title, seats)
    clients = [await gw.join(g.game_id, f"p{i}") for i in range(seats)]
    if start:
        out = await clients[0].start()
        await clients[0].wait_view(out.version)
    return g.game_id, clients


def _clean_4xx(resp, status: int | None = None, code: str | None = None) -> dict:
    assert 400 <= resp.status_code < 500, (resp.status_code, resp.text[:300])
    body = resp.json()
    assert set(body) >= {"code", "message"} and body["message"].endswith("."), body
    assert "Traceback" not in resp.text and "qh1." not in resp.text
    if status is not None:
        assert resp.status_code == status, (resp.status_code, body)
    if code is not None:
        assert body["code"] == code, body
    return body


def test_deep_json_and_out_of_range_numbers_are_4xx_not_500(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, b) = await _seated(gw)
            auth = {"Authorization": f"Bearer {a.token}", "Content-Type": "application/json"}
            deep = b"[" * 5000 + b"]" * 5000
            for path, body in (("/games", deep),
                               ("/games", b'{"title":"questeros","seats":2,"options":' + b'{"a":' * 2000 + b"1" + b"}" * 2001),
                               (f"/games/{gid}/seats/0/commands", b'{"command":' + b"[" * 3000 + b"]" * 3000 + b"}")):
                _clean_4xx(await gw.http.post(path, content=body, headers=auth), 400, "invalid_request")
            huge = 2**70
            for path, body in (("/games", {"title": "questeros", "seats": huge}),
                               ("/games", {"title": "questeros", "seats": -huge}),
                               (f"/games/{gid}/seats/0/commands", {"command": {"type": "questeros.bid", "quests": huge}}),
                               (f"/games/{gid}/seats/0/commands",
                                {"command": {"type": "questeros.bid", "quests": 1}, "expected_version": huge})):
                _clean_4xx(await gw.http.post(path, json=body, headers=auth), 400, "invalid_request")
            for after in (2**63, 2**64, 10**30):
                _clean_4xx(await gw.http.get(f"/games/{gid}/feed", params={"after": after}), 400)
                _clean_4xx(await gw.http.get(f"/games/{gid}/seats/0/feed", params={"after": after}, headers=auth), 400)
            for path in (f"/games/{gid}/audit", f"/games/{gid}/bundle"):  # a running game is not public
                _clean_4xx(await gw.http.get(path), 409, "game_not_over")
            # the game is untouched: the refused requests wrote nothing
            assert (await a.view())["version"] == (await gw.spectator_view(gid))["version"]
            assert len(await gw.spectator_feed(gid, limit=1000)) == (await gw.spectator_view(gid))["version"]

    anyio.run(main)


_ = (pytest, GatewayError)


async def _close_code(url: str, headers: dict | None = None) -> int:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with connect(url, additional_headers=headers) as ws:
        with anyio.fail_after(10):
            try:
                while True:
                    await ws.recv()
            except ConnectionClosed as exc:
                return exc.rcvd.code if exc.rcvd else -1


def test_websocket_since_tokens_and_bad_frames(gateway):
    from websockets.asyncio.client import connect

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, b) = await _seated(gw)
            other_gid, (c, _) = await _seated(gw, start=False)
            base = f"{gw.ws_url}/v1/games/{gid}"
            for since in ("-1", "abc", "1e3", "%C2%B2", "%EF%BC%91", "9" * 13, "0x10", "%20"):
                assert await _close_code(f"{base}/ws?since={since}") == 4400, since
                assert await _close_code(f"{base}/seats/0/ws?since={since}&token={a.token}") == 4400, since
            # tokens on sockets: another seat, another game, forged, missing, empty, in the query
            assert await _close_code(f"{base}/seats/1/ws", {"Authorization": f"Bearer {a.token}"}) == 4403
            assert await _close_code(f"{base}/seats/0/ws?token={c.token}") == 4403
            assert await _close_code(f"{base}/seats/0/ws") == 4401
            assert await _close_code(f"{base}/seats/0/ws?token=") == 4401
            assert await _close_code(f"{base}/seats/0/ws?token={a.token[:-2]}xx") == 4401
            assert await _close_code(f"{base}/seats/-1/ws?token={a.token}") == 4403
            assert await _close_code(f"{gw.ws_url}/v1/games/a*b/ws") == 4400
            assert await _close_code(f"{gw.ws_url}/v1/games/nope/ws") == 4404
            # a huge since on a live game: the current view only (it said nothing), the socket stays usable
            async with connect(f"{base}/seats/0/ws?since=999999999999&token={a.token}") as ws:
                with anyio.fail_after(10):
                    first = __import__("json").loads(await ws.recv())
                assert first["type"] == "view" and first["version"] < 999999999999, first
                bad = ["", "null", "[1]", '{"type":"command"}', '{"type":"command","command":{"type":"nope"}}',
                       "[" * 4000 + "]" * 4000, b"\x00\xff\x00", b'{"type":"ping"}',
                       '{"type":"command","command":{"type":"questeros.bid","quests":' + str(2**70) + "}}",
                       '{"type":"command","command":{"type":"questeros.bid","quests":1},"expected_version":' + str(2**70) + "}",
                       '{"type":"command","command":{"type":"questeros.bid","quests":1},"command_id":"a b"}']
                for frame in bad:
                    await ws.send(frame)
                replies = []
                with anyio.fail_after(10):
                    while len(replies) < len(bad):
                        replies.append(__import__("json").loads(await ws.recv()))
                kinds = [(m["type"], m.get("code")) for m in replies]
                assert ("pong", None) in kinds, kinds
                assert all(t in ("error", "pong") for t, _ in kinds), kinds
                assert all("Traceback" not in m.get("message", "") for m in replies)
                await ws.send('{"type":"ping"}')
                with anyio.fail_after(5):
                    assert __import__("json").loads(await ws.recv())["type"] == "pong"

    anyio.run(main)


def test_odd_names_ids_and_bodies_are_refused_cleanly(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 3)
            gid = g.game_id
            jh = {"Content-Type": "application/json"}
            for name in ("a\u0000b", "\u202eevil", "x" * 10_000, "   ", "", "\u200b", "a\nb"):
                _clean_4xx(await gw.http.post(f"/games/{gid}/join", json={"name": name}), 422, "bad_name")
            for raw in (b'{"name":"\\ud800"}', b'{"name":"a\\udfff b"}', b'{"name":"\xff\xfe"}',
                        b'{"name":"ok","client_seed":' + b'"' + b"f" * 65 + b'"}'):
                body = _clean_4xx(await gw.http.post(f"/games/{gid}/join", content=raw, headers=jh))
                assert body["code"] in ("invalid_request", "bad_name", "bad_client_seed"), (raw, body)
            for seat in (-1, 64, 2**31, 2**70):
                body = _clean_4xx(await gw.http.post(f"/games/{gid}/join", json={"name": "ok", "seat": seat}))
                assert body["code"] in ("seat_out_of_range", "invalid_request"), body
                if seat == -1:  # refused before the bus, in a sentence saying why
                    assert body["message"] == "Seat -1 is no seat: seats are numbered from 0, and no game has 64.", body
            for gid_bad in ("{g}", "a*", "a:b", "a?b", "a]b", "a b", "..", ".", "x" * 65):
                resp = await gw.http.post("/games", json={"title": "questeros", "seats": 2, "game_id": gid_bad})
                _clean_4xx(resp, 400, "bad_game_id")
            for title in ("chess", "", "questeros*", "*", "{questeros}", "q" * 5000):
                _clean_4xx(await gw.http.post("/games", json={"title": title, "seats": 2}), 404, "unknown_title")
                resp = await gw.http.get("/lobby", params={"title": title})
                _clean_4xx(resp, 404, "unknown_title")
            for options in ({"nope": 1}, {"mode": 5}, {"mode": [1]}):
                body = _clean_4xx(await gw.http.post("/games", json={"title": "quests_over_coffee", "seats": 1, "options": options}))
                assert body["code"] in ("bad_options", "invalid_request"), body
            # nothing half written: still 3 open seats, no names
            lobby = await gw.game(gid)
            assert lobby.taken == 0 and lobby.names == [None, None, None]
            a = await gw.join(gid, "\u00c9lo\u00efse \U0001f3b2")
            assert a.name == "\u00c9lo\u00efse \U0001f3b2"

    anyio.run(main)


def test_a_join_cannot_replay_a_seat_commands_id_to_mint_its_token(gateway):
    """Join idempotency must not share ids with the seat's commands: a join replaying the id of
    an accepted command of seat 0 (chat bots often derive ids from public chat message ids)
    would get the stored ``accepted`` outcome and a fresh token for seat 0."""
    from schemas.questeros import Bid

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, b) = await _seated(gw)
            view = await a.view()
            mover = [a, b][view["to_move"][0]]
            await mover.submit(Bid(quests=1), command_id="chat-msg-1234")
            with pytest.raises(GatewayError) as e:
                await gw.join(gid, "mallory", seat=mover.seat, command_id="chat-msg-1234")
            assert e.value.status == 409 and e.value.code == "not_in_lobby", e.value
            # the start command's id (the SDK lets the gateway pick it; a client may choose it too)
            g2 = await gw.create("questeros", 2)
            c = await gw.join(g2.game_id, "c", seat=0, command_id="join-c")
            await gw.join(g2.game_id, "d", seat=1)
            again = await gw.join(g2.game_id, "c", seat=0, command_id="join-c")  # an honest retry still works
            assert again.seat == 0 and again.token
            out = await c.submit({"type": "abandon"}, command_id="same-id")  # any accepted command
            with pytest.raises(GatewayError) as e:
                await gw.join(g2.game_id, "mallory", seat=0, command_id="same-id")
            assert e.value.status == 409, (out, e.value)
            # command ids reused across seats are separate commands
            gid3, (p, q) = await _seated(gw)
            v = await p.view()
            first, second = [p, q][v["to_move"][0]], [p, q][1 - v["to_move"][0]]
            r1 = await first.submit(Bid(quests=1), command_id="shared")
            r2 = await second.submit(Bid(quests=1), command_id="shared")  # its own command, not seat 1's outcome
            assert r2.version > r1.version, (r1, r2)
            assert await first.submit(Bid(quests=1), command_id="shared") == r1  # a retry: the first outcome
            with pytest.raises(GatewayError) as e:  # another command under the used id (issue 13)
                await first.submit(Bid(quests=3), command_id="shared")
            assert (e.value.status, e.value.code) == (409, "command_id_reused"), e.value

    anyio.run(main)


def _str_lists(obj):
    if isinstance(obj, list):
        if len(obj) >= 2 and all(isinstance(x, str) for x in obj):
            yield obj
        for v in obj:
            yield from _str_lists(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _str_lists(v)


async def _true_states(settings, title: str, gid: str):
    from services.adapters.redis_store import EventStore, connect
    from services.kernel import codec
    from services.kernel import game as lifecycle

    r = connect(settings.url)
    try:
        c = codec(title)
        events = await EventStore(r, settings).read_events(c, gid)
    finally:
        await r.aclose()
    states, game = {}, None
    for e in events:
        game = lifecycle.fold(c.title, [e], game)
        states[e.version] = game
    tags = [e.body.__struct_config__.tag for e in events]
    seed_at = next(e.version for e in events if tags[e.version - 1] == "seed_revealed")
    return states, events[seed_at - 1].body.seed, seed_at


def test_every_channel_of_a_coop_quests_over_coffee_game_hides_deck_orders_seed_and_tokens(gateway, capfd):
    """Seat 0 and a spectator of a 2-seat co-op Quests Over Coffee game: every socket message,
    feed and view, lobby page, /metrics, error bodies and the process's log lines, checked
    against the true state folded from the event stream (deck orders, the seed, the tokens)."""
    import functools
    import json
    import random

    from services.kernel import get_title
    from services.sdk import BotStats, play_seat

    title = "quests_over_coffee"
    channels: dict[str, list] = {"seat0": [], "spec": [], "public": []}

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, clients = await _seated(gw, title, 2, start=False)
            t = get_title(title)

            async def spectate():
                async with gw.spectate(gid) as sub:
                    while True:
                        m = await sub.recv(timeout=60)
                        channels["spec"].append(m)
                        if m["type"] == "view" and m["view"]["status"] in ("finished", "abandoned"):
                            return

            stats = BotStats()
            async with anyio.create_task_group() as tg:
                tg.start_soon(spectate)
                await clients[0].start()
                for i, c in enumerate(clients):
                    tg.start_soon(functools.partial(play_seat, c, t.bots[sorted(t.bots)[0]], t.view_type,
                                                    random.Random(i), stats, capture=(i == 0)))
                # while it runs: lobby pages, metrics, a refused cross-seat read
                for status in ("open", "running", "finished"):
                    channels["public"].append((None, [msgspec.to_builtins(g) for g in await gw.lobby(title, status)]))
                channels["public"].append((None, (await gw.http.get(gateway.url + "/metrics")).text))
                resp = await gw.http.get(f"/games/{gid}/seats/1/view", headers={"Authorization": f"Bearer {clients[0].token}"})
                channels["public"].append((None, resp.json()))
            channels["seat0"] = stats.messages[0]
            channels["seat0"] += [{"type": "feed", "version": e["version"], "entry": e} for e in await clients[0].feed(limit=1000)]
            channels["spec"] += [{"type": "feed", "version": e["version"], "entry": e}
                                 for e in await gw.spectator_feed(gid, limit=1000)]
            return gid, [c.token for c in clients]

    import msgspec

    gid, toks = anyio.run(main)
    states, seed, seed_at = anyio.run(_true_states, gateway.settings, title, gid)
    checked = 0
    for who in ("seat0", "spec"):
        for m in channels[who]:
            v = m["version"]
            rules = states[v].rules
            text = json.dumps(m)
            assert not any(tok in text for tok in toks), f"{who} v{v}: a seat token"
            if v < seed_at:
                assert seed not in text and '"seed"' not in text, f"{who} v{v}: the seed"
            if rules is None:
                continue
            pairs = {(d[i], d[i + 1]) for d in (rules.deck, rules.item_deck, rules.env_deck, rules.comp_deck)
                     for i in range(len(d) - 1)}
            for lst in _str_lists(m):
                leaked = [(x, y) for x, y in zip(lst, lst[1:], strict=False) if (x, y) in pairs]
                assert not leaked, f"{who} at v{v} saw face-down deck order {leaked[:3]} in {lst[:6]}"
            checked += 1
    for _, payload in channels["public"]:
        text = json.dumps(payload)
        assert seed not in text and not any(tok in text for tok in toks)
    logs = "".join(capfd.readouterr())
    assert not any(tok in logs for tok in toks), "a seat token in the logs"
    assert not any(tok.split(".")[2] in logs for tok in toks), "a token signature in the logs"
    assert checked > 50


def test_tokens_with_odd_bytes_empty_bearers_long_headers_and_admin_paths(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, b) = await _seated(gw)
            head, payload, sig = a.token.split(".")
            view = f"/games/{gid}/seats/0/view"
            for value in (f"Bearer {head}.{payload}.{sig[:-1]}\xe9".encode("latin-1"), f"Bearer {head}.{payload}\xe9.{sig}".encode("latin-1"),
                          b"Bearer", b"bearer " + a.token.encode() + b"x", b"Basic " + a.token.encode(),
                          b"Bearer " + b"A" * 7000, b"Bearer qh1..", b"Bearer qh1.e30." + sig.encode()):
                body = _clean_4xx(await gw.http.get(view, headers=[(b"Authorization", value)]), 401)
                assert body["code"] in ("token_invalid", "token_missing"), (value[:40], body)
            for path, method in ((f"/admin/games/{gid}/audit", "GET"), ("/admin/rebuild", "POST")):
                resp = await gw.http.request(method, path, headers=[(b"Authorization", b"Bearer " + a.token.encode())])
                _clean_4xx(resp, 401, "admin_token_invalid")
                resp = await gw.http.request(method, path, headers=[(b"Authorization", "Bearer \xe9".encode("latin-1"))])
                _clean_4xx(resp, 401, "admin_token_invalid")
            # the token is the header's, not the query's, over HTTP
            _clean_4xx(await gw.http.get(view, params={"token": a.token}), 401, "token_missing")
            base = f"{gw.ws_url}/v1/games/{gid}/seats/0/ws"
            assert await _close_code(f"{base}?token={head}.{payload}.{sig[:-1]}%C3%A9") == 4401
            assert await _close_code(base, {"Authorization": f"Bearer {head}.{payload}.{sig[:-1]}\xe9"}) == 4401

    anyio.run(main)


def test_socket_floods_oversize_and_binary_frames_abrupt_closes_and_reconnect_storms(gateway):
    import json
    import random

    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from services.kernel import get_title
    from services.sdk import BotStats, play_seat

    async def sockets_gauge(gw) -> float:
        text = (await gw.http.get(gateway.url + "/metrics")).text
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("questhall_gateway_sockets{"))

    async def main():
        async with Gateway(gateway.url) as gw:
            before = await sockets_gauge(gw)
            gid, (a, b) = await _seated(gw)
            url = f"{gw.ws_url}/v1/games/{gid}/seats/0/ws?token={a.token}"
            # a ping flood is answered in order, pong for pong
            async with connect(url) as ws:
                for _ in range(500):
                    await ws.send('{"type":"ping"}')
                pongs = 0
                with anyio.fail_after(20):
                    while pongs < 500:
                        if json.loads(await ws.recv())["type"] == "pong":
                            pongs += 1
            # an oversize text frame and an oversize binary frame: close 1009
            for frame in ("x" * 9000, b"\x00" * 9000):
                async with connect(url, max_size=None) as ws:
                    await ws.send(frame)
                    with pytest.raises(ConnectionClosed) as ce, anyio.fail_after(10):
                        while True:
                            await ws.recv()
                    assert ce.value.rcvd.code == 1009
            # a command flood over the socket: every one answered (outcome or error), none lost
            async with connect(url) as ws:
                n = 60
                for i in range(n):
                    await ws.send(json.dumps({"type": "command", "command": {"type": "questeros.bid", "quests": 99},
                                              "command_id": f"flood-{i}"}))
                answers = 0
                with anyio.fail_after(30):
                    while answers < n:
                        if json.loads(await ws.recv())["type"] in ("outcome", "error"):
                            answers += 1
            # reconnect storm with abrupt closes while the game is played, then a clean watcher
            t = get_title("questeros")
            stats = BotStats()
            async with anyio.create_task_group() as tg:
                for i, c in enumerate((a, b)):
                    tg.start_soon(play_seat, c, t.bots["random"], t.view_type, random.Random(i), stats)
                rng = random.Random(5)
                for k in range(40):
                    spec = f"{gw.ws_url}/v1/games/{gid}/ws?since={rng.randrange(0, 50)}"
                    ws = await connect(spec if k % 2 else url)
                    if rng.random() < 0.5:
                        with anyio.move_on_after(0.05):
                            await ws.recv()
                    ws.transport.abort() if hasattr(ws, "transport") else await ws.close()
            final = await gw.spectator_view(gid)
            assert final["status"] == "finished"
            got = []
            async with gw.spectate(gid, since=0) as sub:
                while True:
                    m = await sub.recv(timeout=10)
                    if m["type"] == "feed":
                        got.append(m["version"])
                    elif m["type"] == "view":
                        break
            assert got == list(range(1, final["version"] + 1)) or got == sorted(set(got))
            with anyio.fail_after(15):  # every socket is accounted for once closed
                while await sockets_gauge(gw) != before:
                    await anyio.sleep(0.05)
            assert (await gw.http.get(gateway.url + "/health")).status_code == 200

    anyio.run(main)


def test_create_with_a_taken_game_id_never_claims_another_title_or_seat_count(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid = f"taken-{__import__('uuid').uuid4().hex[:8]}"
            first = await gw.create("questeros", 3, game_id=gid, command_id="mine-1")
            assert (await gw.create("questeros", 3, game_id=gid, command_id="mine-1")) == first  # the idempotent retry
            for title, seats in (("questeros", 3), ("orion_duel", 2), ("questeros", 2), ("quests_over_coffee", 1)):
                try:
                    got = await gw.create(title, seats, game_id=gid)
                except GatewayError as exc:
                    assert exc.status == 409 and exc.code in ("game_exists", "wrong_title"), exc
                else:
                    raise AssertionError(f"create {title}/{seats} of a taken id answered {got}")
            lobby = await gw.game(gid)
            assert (lobby.title, lobby.seats) == ("questeros", 3)

    anyio.run(main)


def test_a_create_repeated_from_the_lobby_never_hands_out_the_owner_token(gateway):
    """Anyone can read a game's id, title and seats from the lobby and send the very same create
    again: it was answered as the creator's retry, with the owner token, and the stranger could
    seat bots and start the game (a breaker's finding). Now only the creator's own command id
    retries a create: the copy is 409 ``game_exists`` without a token, the creator's retry gets
    the same token, and the game waits for its seats."""
    import httpx

    async def main():
        async with Gateway(gateway.url) as gw:
            mine = await gw.create("orion_duel", 2, command_id="secret-create-7")
            entry = await gw.game(mine.game_id)
            request = {"title": entry.title, "seats": entry.seats, "options": {}, "game_id": mine.game_id}
            for copy in (request, {**request, "command_id": "guess-1"}):
                resp = httpx.post(gateway.url + "/v1/games", json=copy, timeout=30)
                assert resp.status_code == 409 and resp.json()["code"] == "game_exists", resp.text
                assert "owner_token" not in resp.text and mine.owner_token not in resp.text
            again = await gw.create("orion_duel", 2, game_id=mine.game_id, command_id="secret-create-7")
            assert again.owner_token == mine.owner_token and again.version == mine.version
            # the retry "after a timeout" does not know the game id: the same game all the same
            blind = await gw.create("orion_duel", 2, command_id="secret-create-7")
            assert (blind.game_id, blind.owner_token) == (mine.game_id, mine.owner_token)
            with pytest.raises(GatewayError) as bad:
                await gw.create("orion_duel", 2, command_id="not an id!")
            assert (bad.value.status, bad.value.code) == (400, "bad_command_id")
            r = connect(gateway.settings.url)
            try:  # the creator's id is never stored in the clear
                stored = [k async for k in r.scan_iter(match=f"{gateway.settings.namespace}:*", count=1000)]
                for key in stored:
                    if (await r.type(key)) == b"stream":
                        for _, fields in await r.xrange(key):
                            assert not any(b"secret-create-7" in v for v in fields.values()), key
            finally:
                await r.aclose()
            assert (await gw.game(mine.game_id)).taken == 0  # nobody seated anything

    anyio.run(main)


def test_a_create_under_a_used_command_id_with_another_request_is_command_id_reused(gateway):
    """The creator's command id again, without ``game_id``, but another request (seats, options,
    title): 409 ``command_id_reused`` with submit's sentence, as for any command id reused (it was
    ``game_exists``/``wrong_title``: the game id derived from the command id is taken by the first
    create); no token, the first game unchanged, and the very same create still its retry. With
    an explicit ``game_id`` a taken id stays ``game_exists``."""
    import httpx

    async def main():
        async with Gateway(gateway.url) as gw:
            first = await gw.create("questeros", 3, command_id="create-once-41")
            for title, seats, options in (("questeros", 4, {}), ("questeros", 3, {"alternative_god_rule": True}),
                                          ("orion_duel", 2, {})):
                resp = httpx.post(gateway.url + "/v1/games", timeout=30, json={
                    "title": title, "seats": seats, "options": options, "command_id": "create-once-41"})
                assert resp.status_code == 409, resp.text
                body = resp.json()
                assert body["code"] == "command_id_reused", body
                assert body["message"] == ("This command id was used for another command; a retry must repeat "
                                           "the command exactly, a new command needs a new id."), body
                assert "owner_token" not in body and first.owner_token not in resp.text
            again = await gw.create("questeros", 3, command_id="create-once-41")
            assert (again.game_id, again.owner_token) == (first.game_id, first.owner_token)
            lobby = await gw.game(first.game_id)
            assert (lobby.title, lobby.seats) == ("questeros", 3)
            with pytest.raises(GatewayError) as taken:  # a chosen id taken: not a reuse of this command id
                await gw.create("questeros", 4, game_id=first.game_id, command_id="create-once-41")
            assert (taken.value.status, taken.value.code) == (409, "game_exists"), taken.value

    anyio.run(main)


def test_a_token_dies_when_its_holder_leaves_the_seat(gateway):
    """Alice takes seat 0, leaves in the lobby, Mallory takes seat 0: Alice's old token must not
    read Mallory's hand or play for her (HTTP and socket)."""
    from schemas.questeros import Bid

    async def main():
        async with Gateway(gateway.url) as gw:
            from websockets.exceptions import ConnectionClosed

            g = await gw.create("questeros", 2)
            alice = await gw.join(g.game_id, "Alice", seat=0, command_id="alice-join")
            async with alice.subscribe() as old_socket:  # opened while Alice holds the seat
                await alice.submit({"type": "leave"})
                mallory = await gw.join(g.game_id, "Mallory", seat=0)
                await gw.join(g.game_id, "Bob", seat=1)
                out = await mallory.start()
                await mallory.wait_view(out.version)
                with pytest.raises(ConnectionClosed) as ce, anyio.fail_after(10):
                    while True:
                        m = await old_socket.recv()
                        assert m["type"] in ("feed", "view") and m["version"] < out.version, m  # nothing of Mallory's game
                assert ce.value.rcvd.code == 4401
            with pytest.raises(GatewayError) as e:  # Alice replays her join: her old outcome, a seat now Mallory's
                await gw.join(g.game_id, "Alice", seat=0, command_id="alice-join")
            assert (e.value.status, e.value.code) == (409, "seat_taken"), e.value
            for call in (alice.view, alice.feed, lambda: alice.submit(Bid(quests=1))):
                with pytest.raises(GatewayError) as e:
                    await call()
                assert e.value.status in (401, 403) and e.value.code.startswith("token_"), e.value
            assert await _close_code(f"{gw.ws_url}/v1/games/{g.game_id}/seats/0/ws?token={alice.token}") in (4401, 4403)
            assert (await mallory.view())["seat"] == 0

    anyio.run(main)


def test_a_body_that_is_not_declared_json_is_415(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            body = b'{"title":"questeros","seats":2}'
            for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                          "application/xml", None):
                headers = {"Content-Type": ctype} if ctype else {}
                resp = await gw.http.post("/games", content=body, headers=headers)
                if ctype is None:
                    resp = await gw.http.post("/games", content=body, headers={"Content-Type": ""})
                _clean_4xx(resp, 415, "unsupported_media_type")
            for ctype in ("application/json", "application/json; charset=utf-8", "Application/JSON"):
                assert (await gw.http.post("/games", content=body, headers={"Content-Type": ctype})).status_code == 201
            gid, (a, _) = await _seated(gw, start=False)
            assert (await a.start()).version > 0  # a POST without a body needs no content type

    anyio.run(main)


def test_a_joins_command_id_is_in_no_log_and_no_bundle(gateway, capfd):
    """A join's command id gets the seat's token again (idempotent retry): it is a credential,
    so neither the logs nor the public bundle may carry it."""
    import json

    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 2)
            a = await gw.join(g.game_id, "A", seat=0, command_id="secret-join-a1")
            await gw.join(g.game_id, "B", seat=1, command_id="secret-join-b1")
            out = await a.start()
            await a.wait_view(out.version)
            again = await gw.join(g.game_id, "A", seat=0, command_id="secret-join-a1")  # the retry still works
            assert again.seat == 0
            await a.submit({"type": "abandon", "reason": "test"})
            with anyio.fail_after(10):
                while True:
                    try:
                        return await gw.bundle(g.game_id), a.token
                    except GatewayError as exc:
                        assert exc.code == "game_not_over", exc
                        await anyio.sleep(0.02)

    bundle, token = anyio.run(main)
    text = json.dumps(bundle)
    assert bundle["status"] == "finished"  # an abandon of a running game is a forfeit
    logs = "".join(capfd.readouterr())
    for secret in ("secret-join-a1", "secret-join-b1", token):
        assert secret not in text, f"{secret} in the public bundle"
        assert secret not in logs, f"{secret} in the logs"


def test_http_bodies_are_typed_as_strictly_as_socket_messages(gateway):
    """A number sent as a string or a whole float for an int is refused over HTTP too (400
    ``invalid_request``; before, Litestar's lax conversion took ``"seats": 2.0`` and
    ``"quests": "1"``), and nothing is created or played."""
    async def main():
        async with Gateway(gateway.url) as gw:
            json_ = {"Content-Type": "application/json"}
            for body in (b'{"title":"questeros","seats":2.0}', b'{"title":"questeros","seats":"2"}',
                         b'{"title":"questeros","seats":true}'):
                _clean_4xx(await gw.http.post("/games", content=body, headers=json_), 400, "invalid_request")
            gid, (a, b) = await _seated(gw)
            before = (await a.view())["version"]
            mover = a if 0 in (await a.view())["to_move"] else b
            auth = {**json_, "Authorization": f"Bearer {mover.token}"}
            for cmd in (b'{"type":"questeros.bid","quests":"1"}', b'{"type":"questeros.bid","quests":1.0}'):
                resp = await gw.http.post(f"/games/{gid}/seats/{mover.seat}/commands", content=b'{"command":%s}' % cmd,
                                          headers=auth)
                _clean_4xx(resp, 400, "invalid_request")
            assert (await a.view())["version"] == before
            assert (await mover.submit({"type": "questeros.bid", "quests": 1})).version > before  # typed right: played

    anyio.run(main)


def test_a_bad_signature_another_titles_bare_command_and_a_huge_number_on_a_socket_get_their_codes(gateway):
    """A breaker's findings: ``"signature": "zz"`` was taken into the hash chain (now 400, nothing
    sent); another title's command without its fields was 400 ``invalid_request`` naming that
    title's field (now 422 ``bad_command`` naming this title's commands); a number past 64 bits on
    a socket was ``invalid_request`` (the socket's code for a malformed message is ``bad_message``)."""
    import json

    from websockets.asyncio.client import connect

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, (a, _) = await _seated(gw)
            before = (await gw.head(gid))["version"]
            path = f"/games/{gid}/seats/0/commands"
            auth = {"Authorization": f"Bearer {a.token}"}
            bid = {"type": "questeros.bid", "quests": 1}
            for sig in ("zz", "0" * 127, "g" * 128):
                _clean_4xx(await gw.http.post(path, json={"command": bid, "signature": sig}, headers=auth),
                           400, "invalid_request")
            body = _clean_4xx(await gw.http.post(path, json={"command": {"type": "orion_duel.place_tile"}}, headers=auth),
                              422, "bad_command")
            assert body["message"].startswith("questeros has no command type 'orion_duel.place_tile'"), body
            assert (await gw.head(gid))["version"] == before  # nothing was sent
            async with connect(f"{gw.ws_url}/v1/games/{gid}/seats/0/ws?token={a.token}") as ws:
                await ws.send(json.dumps({"type": "command", "command": {"type": "questeros.bid", "quests": 2**70}}))
                with anyio.fail_after(10):
                    while (m := json.loads(await ws.recv()))["type"] in ("feed", "view"):
                        pass
                assert (m["type"], m["code"]) == ("error", "bad_message"), m

    anyio.run(main)
