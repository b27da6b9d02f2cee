"""Bot seats on a real Redis: the bot service plays them from their views through the bus,
idempotently, across a SIGKILL of the service; a bot seat finishes a game (issue 14)."""

from __future__ import annotations

import time

import anyio

from schemas.envelope import Accepted, JoinSeat, StartGame
from services.adapters.client import BusClient
from services.adapters.redis_store import EventStore, connect
from services.audit.store import audit_game
from services.kernel import codec, fold, get_title
from services.kernel.hashing import keyed_tag
from services.runtime.serve import services_running
from tests.procs import kill9, spawn, stop


async def until(cond, timeout: float = 90.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not await cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.05)


async def bot_game(c: BusClient, title: str, bots: list[str | None], options: dict | None = None) -> str:
    """Create a game whose seats are joined as the given bots (None: a person named P<i>)."""
    gid = await c.create(title, len(bots), options or {})
    for i, b in enumerate(bots):
        out = await c.submit(title, gid, JoinSeat(bot=b) if b else JoinSeat(name=f"P{i}"), i)
        assert isinstance(out, Accepted), out
    assert isinstance(await c.submit(title, gid, StartGame(), 0), Accepted)
    return gid


async def status(r, settings, gid) -> bytes | None:
    return await r.hget(settings.keys.game(gid, "meta"), "status")


def test_bot_seats_finish_games_of_every_title_and_the_audit_is_valid(settings):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        async with services_running(settings, r=r, bots=True):
            games = {
                await bot_game(c, "orion_duel", ["greedy", "random"]): "orion_duel",
                await bot_game(c, "quests_over_coffee", ["sensible"]): "quests_over_coffee",
                await bot_game(c, "questeros", ["random", "bidder", "random"]): "questeros",
            }

            async def done() -> bool:
                return all([await status(r, settings, g) == b"finished" for g in games])

            await until(done, what="every bot game to finish")
            for g, t in games.items():
                assert (await audit_game(r, settings, g)).status == "valid"
                events = await EventStore(r, settings).read_events(codec(t), g)
                assert fold(get_title(t), events).status == "finished"
                cmds = await EventStore(r, settings).read_commands(codec(t), g)
                ids = [e.command_id for _, _, e in cmds if e.command_id.startswith("bot:")]
                assert ids and len(ids) == len(set(ids))
        await r.aclose()

    anyio.run(main)


def test_a_person_plays_against_a_bot_seat_which_answers_each_move(settings):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        async with services_running(settings, titles=["orion_duel"], r=r, bots=True):
            gid = await bot_game(c, "orion_duel", [None, "greedy"], {"setup": "symmetric_1", "first_seat": 0})
            t = get_title("orion_duel")
            for _ in range(3):
                game = fold(t, await EventStore(r, settings).read_events(codec("orion_duel"), gid))
                assert t.to_move(game.rules) == [0]
                v = game.version
                assert isinstance(await c.submit("orion_duel", gid, t.legal_commands(game.rules, 0)[0], 0), Accepted)

                async def answered(v: int = v) -> bool:
                    g = fold(t, await EventStore(r, settings).read_events(codec("orion_duel"), gid))
                    return g.version > v + 1 and t.to_move(g.rules) == [0] or g.status != "active"

                await until(answered, what="the bot seat's answer")
        await r.aclose()

    anyio.run(main)


def test_a_seat_taken_over_by_a_bot_is_played_by_the_bot_not_marked_absent(settings):
    """on_timeout = bot, absent_after = 1, through the bus with the clock and bot services: seat
    0's person never moves; its first timeout hands it to the bot, which plays the rest. The
    takeover does not also mark it absent (that made its next deadline fall due at once, racing
    the bot service: docs/gateway.md "Clocks"), and the game audits valid."""
    opts = {"clock": "move", "move_seconds": 2, "on_timeout": "bot", "absent_after": 1, "setup": "symmetric_1",
            "first_seat": 0}

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        async with services_running(settings, titles=["orion_duel"], r=r, clock=True, bots=True):
            gid = await bot_game(c, "orion_duel", [None, "greedy"], opts)

            async def done() -> bool:
                return await status(r, settings, gid) == b"finished"

            await until(done, what="the game to finish")
            events = await EventStore(r, settings).read_events(codec("orion_duel"), gid)
            tags = [e.body.__struct_config__.tag for e in events]
            taken = [e.body for e in events if e.body.__struct_config__.tag == "seat_botted" and e.body.takeover]
            assert [b.seat for b in taken] == [0] and "seat_absent" not in tags
            cmds = await EventStore(r, settings).read_commands(codec("orion_duel"), gid)
            assert any(e.command_id.startswith("bot:0:") for _, _, e in cmds)  # the bot played seat 0
            # the server's own ids end in a tag keyed by the game's secret seed: not predictable
            # from public data (the head hash of a bot's hidden choice could be brute-forced)
            key = await EventStore(r, settings).seed(gid)
            for _, _, e in cmds:
                if e.command_id.startswith(("bot:", "timeout:")):
                    kind, seat, version, tag = e.command_id.split(":")
                    assert tag == keyed_tag(key, f"{kind}:{seat}:{version}") and len(tag) == 24
            assert {e.command_id.split(":")[0] for _, _, e in cmds} >= {"bot", "timeout"}
            assert (await audit_game(r, settings, gid)).status == "valid"
        await r.aclose()

    anyio.run(main)


def test_a_sigkilled_bot_service_is_replaced_and_every_bot_move_is_made_once(settings, tmp_path):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        bots = spawn(settings, "bots", log=tmp_path / "bots1.log")
        try:
            async with services_running(settings, titles=["orion_duel"], r=r):
                games = [await bot_game(c, "orion_duel", ["random", "random"]) for _ in range(3)]

                async def some_moves() -> bool:
                    return all([int(await r.hget(settings.keys.game(g, "meta"), "version") or 0) > 12 for g in games])

                await until(some_moves, what="the first bot moves")
                kill9(bots)
                bots = spawn(settings, "bots", "--min-idle-ms", "500", log=tmp_path / "bots2.log")

                async def done() -> bool:
                    return all([await status(r, settings, g) == b"finished" for g in games])

                await until(done, what="the replacement to finish every game")
                for g in games:
                    cmds = await EventStore(r, settings).read_commands(codec("orion_duel"), g)
                    versions = [e.expected_version for _, _, e in cmds if e.command_id.startswith("bot:")]
                    assert len(versions) == len(set(versions)), "a bot moved twice on one view"
                    assert (await audit_game(r, settings, g)).status == "valid"
        finally:
            stop(bots)
            await r.aclose()

    anyio.run(main)


def test_an_unknown_bot_is_refused_at_join(settings):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        async with services_running(settings, titles=["orion_duel"], r=r):
            gid = await c.create("orion_duel", 2)
            out = await c.submit("orion_duel", gid, JoinSeat(bot="chess-engine"), 0)
            assert out.code == "unknown_bot"
        await r.aclose()

    anyio.run(main)


def test_a_bot_name_the_title_no_longer_has_is_logged_and_nothing_is_sent(settings, monkeypatch):
    """A stored bot name the title dropped (names are checked at join): the bot service logs
    ``bot_unknown`` (warning) for the seat and sends nothing; the seat waits for its clock."""
    from structlog.testing import capture_logs

    from services.runtime.bots import Bots

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        async with services_running(settings, r=r, bots=False):
            gid = await bot_game(c, "quests_over_coffee", ["sensible"])
            version = int(await r.hget(settings.keys.game(gid, "meta"), "version"))
            monkeypatch.delitem(get_title("quests_over_coffee").bots, "sensible")
            bots = Bots(r, settings)
            with capture_logs() as logs:
                assert await bots.play(gid, "quests_over_coffee", version)
            assert bots.handled == 0
            assert int(await r.hget(settings.keys.game(gid, "meta"), "version")) == version  # nothing was sent
            unknown = [e for e in logs if e["event"] == "bot_unknown"]
            assert [(e["log_level"], e["seat"], e["bot"]) for e in unknown] == [("warning", 0, "sensible")], logs
        await r.aclose()

    anyio.run(main)
