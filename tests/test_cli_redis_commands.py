"""The one-shot commands on Redis (``archive``, ``restore``) refuse in one line and exit 2 (a
damaged archived record with its code); records of every archive form restore; the
success paths are in tests/gateway/test_bounded.py, the chat services' in tests/chat and tests/matrix."""

from __future__ import annotations

import uuid

import pytest
from typer.testing import CliRunner

from services.cli import app


def test_archive_and_restore_of_an_unknown_game_say_so_in_one_line_and_exit_2(redis_url, monkeypatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", "t" + uuid.uuid4().hex[:10])
    for args in (["archive", "--game", "gnosuchgame"], ["restore", "gnosuchgame"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert "gnosuchgame" in res.output and "Traceback" not in res.output, res.output
        assert len(res.output.strip().splitlines()) <= 2, res.output
    res = CliRunner().invoke(app, ["archive", "--older-than-days", "0"])
    assert res.exit_code == 0 and "Archived 0 games." in res.output, res.output


def test_records_of_every_archive_form_restore_and_a_damaged_one_is_refused_in_one_line(settings, monkeypatch) -> None:
    """An archived game whose record was written as ``/2`` or as zlib JSON (older code) restores
    byte for byte; a damaged record is refused with its code (exit 2), and nothing is written."""
    import random
    import zlib

    import anyio
    import msgspec

    from services.adapters import ended
    from services.adapters.client import BusClient
    from services.audit.archive import archive, archive_key, restore
    from services.audit.compact import CorruptRecord, pack
    from services.audit.store import audit_game, export_bundle
    from services.local.demo import TitleStats, play_bot_game
    from services.runtime.serve import services_running

    async def main() -> None:
        async with services_running(settings, titles=["orion_duel"]) as s:
            r, k = s["redis"], settings.keys
            stats = TitleStats()
            await play_bot_game(BusClient(r, settings, timeout=60), "orion_duel", 2, random.Random(3), stats)
            gid = stats.game_ids[0]
            with anyio.fail_after(60):
                while not await ended.is_settled(r, k, gid):
                    await anyio.sleep(0.02)
            bundle = await export_bundle(r, settings, gid)
            rows = await ended.all_rows(r, k, gid)
            for older in (pack(bundle, fmt=2), zlib.compress(msgspec.json.encode(bundle), 9)):
                await archive(r, settings, gid)
                await r.set(archive_key(settings, gid), older)  # as the code before wrote it
                await restore(r, settings, gid)
                assert await ended.all_rows(r, k, gid) == rows
                assert (await audit_game(r, settings, gid)).status == "valid"
            await archive(r, settings, gid)
            good = await r.get(archive_key(settings, gid))
            for damaged, code in ((good[:-30], "archive_corrupt"), (b"QHA7" + good[4:], "archive_unknown_format"),
                                  (b"\x78\xda" + good[2:], "archive_corrupt")):
                await r.set(archive_key(settings, gid), damaged)
                with pytest.raises(CorruptRecord) as info:
                    await restore(r, settings, gid)
                assert info.value.code == code and gid in str(info.value)
                assert not await r.exists(k.game(gid, "meta"))
            monkeypatch.setenv("REDIS_URL", settings.url)
            monkeypatch.setenv("QUESTHALL_NAMESPACE", settings.namespace)
            monkeypatch.setenv("QUESTHALL_PARTITIONS", str(settings.partitions))
            res = await anyio.to_thread.run_sync(lambda: CliRunner().invoke(app, ["restore", gid]))
            assert res.exit_code == 2 and "archive_corrupt" in res.output and "Traceback" not in res.output, res.output
            assert len(res.output.strip().splitlines()) <= 2, res.output
            await r.set(archive_key(settings, gid), good)
            await restore(r, settings, gid)
            assert await ended.all_rows(r, k, gid) == rows

    anyio.run(main)


def test_audit_export_and_replay_of_an_archived_game_say_it_is_archived_and_how_to_restore_it(settings, monkeypatch) -> None:
    """An archived game has no live keys, only its bundle under the archive key: ``audit``,
    ``export`` and ``replay`` say it is archived and that ``questhall restore`` brings it back
    (they said "no game 'G' in namespace"; a newcomer's finding)."""
    import anyio

    from services.adapters.redis_store import connect
    from services.audit.archive import archive_key

    gid = "garchived1"

    async def put() -> None:
        r = connect(settings.url)
        await r.set(archive_key(settings, gid), b"QHA3 not read by these commands")
        await r.aclose()

    anyio.run(put)
    monkeypatch.setenv("REDIS_URL", settings.url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", settings.namespace)
    for args in (["audit", gid], ["export", gid], ["replay", gid]):
        res = CliRunner().invoke(app, args)
        out = " ".join(res.output.split())
        assert res.exit_code == 2, (args, res.output)
        assert f"Game '{gid}' is archived" in out and f"'questhall restore {gid}' brings it back" in out, (args, out)
        assert "no game" not in out.lower() and "Traceback" not in out


def test_replay_and_audit_of_a_game_of_a_title_this_questhall_does_not_know_say_so_in_one_line(settings, monkeypatch) -> None:
    """A stored game whose title is not registered here (a title module not installed): one line
    naming it and the known titles, exit 2 (replay: the registry's KeyError in a traceback; audit: "KeyError: 'nope'")."""
    import anyio

    from services.adapters.redis_store import connect

    async def put() -> None:
        r = connect(settings.url)
        await r.hset(settings.keys.game("gunknown1", "meta"), mapping={"title": "nope", "version": 1})
        await r.aclose()

    anyio.run(put)
    monkeypatch.setenv("REDIS_URL", settings.url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", settings.namespace)
    res = CliRunner().invoke(app, ["replay", "gunknown1"])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and out.startswith("Game gunknown1 is of title 'nope', which this questhall does not know; "
                                                 "known: "), out
    assert "questeros" in out and res.exception is None or isinstance(res.exception, SystemExit)
    res = CliRunner().invoke(app, ["audit", "gunknown1"])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "its title 'nope' is one this questhall does not know; known: " in out, out
