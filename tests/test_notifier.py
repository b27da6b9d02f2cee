"""Signed webhooks from the notifier to a real HTTP receiver on loopback (issue 14): delivered
at least once, deduplicable by key, signature verified, retried after a 500, dead-lettered after
N tries, nothing secret in any body."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import msgspec

from schemas.envelope import AbandonGame, Accepted
from services.adapters.client import BusClient
from services.adapters.redis_store import EventStore, connect
from services.kernel import codec, fold, get_title
from services.runtime.notifier import Notifier, NotifierConfig, verify
from services.runtime.serve import services_running

SECRET = b"test-webhook-secret"


class Receiver:
    """A webhook receiver on 127.0.0.1: ``/ok`` answers 200, ``/flaky`` answers 500 to the first
    delivery of each key, ``/down`` always 500. Records every request."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict, bytes]] = []
        self.lock = threading.Lock()
        recv = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with recv.lock:
                    seen = any(p == self.path and h["Idempotency-Key"] == self.headers["Idempotency-Key"] for p, h, _ in recv.got)
                    recv.got.append((self.path, dict(self.headers), body))
                ok = self.path == "/ok" or (self.path == "/flaky" and seen)
                self.send_response(200 if ok else 500)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def at(self, path: str) -> list[tuple[dict, bytes]]:
        with self.lock:
            return [(h, b) for p, h, b in self.got if p == path]


async def until(cond, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not await cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.05)


def test_webhooks_are_signed_delivered_retried_deduplicable_and_hold_no_secret(settings):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        t = get_title("questeros")
        with Receiver() as rx:
            cfg = NotifierConfig(secret=SECRET, webhook_urls=[rx.url + "/ok", rx.url + "/flaky"], soon_ms=29_000,
                                 max_attempts=3, backoff_ms=50, tick=0.05)
            notifier = Notifier(r, settings, cfg)
            async with services_running(settings, titles=["questeros"], r=r), anyio.create_task_group() as tg:
                await tg.start(notifier.run)
                gid, _ = await c.setup("questeros", 2, {"clock": "move", "move_seconds": 30})
                await r.sadd(settings.keys.game(gid, "webhooks"), rx.url + "/down")  # this game's own URL
                store = EventStore(r, settings)
                hands: set[str] = set()
                for _ in range(3):
                    game = fold(t, await store.read_events(codec("questeros"), gid))
                    hands |= {card for hand in game.rules.hands for card in hand}
                    s = t.to_move(game.rules)[0]
                    assert isinstance(await c.submit("questeros", gid, t.default_move(game.rules, s), s), Accepted)

                async def soon() -> bool:  # 1 s after the last move: 29 s before its deadline (/flaky: retried)
                    return len([1 for _, b in rx.at("/flaky") if json.loads(b)["type"] == "deadline_soon"]) >= 2

                await until(soon, what="a deadline_soon notification")
                seed_hex = (await r.hget(settings.keys.game(gid, "secret"), "seed")).hex()  # secret until the end
                assert isinstance(await c.submit("questeros", gid, AbandonGame(reason="bye"), 0), Accepted)
                last = int(await r.hget(settings.keys.game(gid, "meta"), "version"))

                async def over_everywhere() -> bool:  # delivered at /ok, and at /flaky after its 500
                    def n(path: str) -> int:
                        return len([1 for _, b in rx.at(path) if json.loads(b).get("type") == "game_over"])

                    return n("/ok") >= 1 and n("/flaky") >= 2

                await until(over_everywhere, what="game_over at every URL")

                async def dead() -> bool:
                    return await r.xlen(f"{settings.keys.tag(settings.keys.partition(gid))}:webhook-dead") >= 1

                await until(dead, what="the /down deliveries to be dead-lettered")
                tg.cancel_scope.cancel()
        ok, flaky = rx.at("/ok"), rx.at("/flaky")
        for h, b in ok + flaky + rx.at("/down"):  # every body is signed and names its key
            assert verify(SECRET, h["X-Questhall-Timestamp"], b, h["X-Questhall-Signature"])
            assert not verify(b"another secret", h["X-Questhall-Timestamp"], b, h["X-Questhall-Signature"])
            doc = json.loads(b)
            assert h["Idempotency-Key"].startswith(f"{gid}:{doc['version']}")
            text = b.decode()
            assert seed_hex not in text and "client_seed" not in text
            strings = _strings(doc)
            assert not strings & hands, f"a card of a hand in a webhook body: {strings & hands}"
        # a deadline_soon is dropped once its deadline is gone (the seat moved): compare the others
        keys_ok = {h["Idempotency-Key"] for h, _ in ok if "deadline_soon" not in h["Idempotency-Key"]}
        keys_flaky = [h["Idempotency-Key"] for h, _ in flaky if "deadline_soon" not in h["Idempotency-Key"]]
        assert set(keys_flaky) == keys_ok and len(keys_ok) >= 2  # at least once everywhere; dedupe by key
        assert all(keys_flaky.count(k) >= 2 for k in keys_ok), [(h["Idempotency-Key"], json.loads(b)["type"]) for h, b in flaky]  # each retried after its 500
        soon_flaky = [h["Idempotency-Key"] for h, _ in flaky if "deadline_soon" in h["Idempotency-Key"]]
        assert any(soon_flaky.count(k) >= 2 for k in soon_flaky)
        kinds = {json.loads(b)["type"] for _, b in ok}
        assert {"your_turn", "game_over", "deadline_soon"} <= kinds
        assert any(json.loads(b)["version"] == last for _, b in ok)
        assert all(len([1 for h, _ in rx.at("/down") if h["Idempotency-Key"] == k]) <= 3 for k in keys_ok)
        await r.aclose()

    anyio.run(main)


def _strings(doc) -> set[str]:
    if isinstance(doc, str):
        return {doc}
    if isinstance(doc, dict):
        return set().union(*(_strings(v) for v in doc.values()), *(_strings(k) for k in doc)) if doc else set()
    if isinstance(doc, list):
        return set().union(*(_strings(v) for v in doc)) if doc else set()
    return set()


def test_a_receiver_refuses_a_forged_or_stale_signature():
    body = msgspec.json.encode({"type": "your_turn"})
    from services.runtime.notifier import sign

    sig = sign(SECRET, 1_000, body)
    assert verify(SECRET, "1000", body, sig, now=1_100)
    assert not verify(SECRET, "1000", body + b" ", sig, now=1_100)
    assert not verify(SECRET, "1000", body, sig, now=5_000)  # replayed much later
    assert not verify(SECRET, "x", body, sig, now=1_000)
