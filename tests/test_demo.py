"""The main job on a real Redis: every shipped title plays, replays and rebuilds; the table is printed."""

from __future__ import annotations

import io

import anyio
from rich.console import Console

from services.kernel import titles
from services.local.demo import run_demo


def test_demo_plays_every_title_and_every_check_holds(redis_url):
    out = io.StringIO()
    console = Console(file=out, width=160)
    shipped = sorted(n for n in titles() if n != "toy")
    ok = anyio.run(lambda: run_demo(redis_url, games=2, concurrency=2, console=console, title_names=shipped))
    text = out.getvalue()
    assert ok, text
    for name in shipped:
        row = next(line for line in text.splitlines() if line.startswith("│") and line.strip("│ ").startswith(name))
        assert row.count("verified") >= 2, row
        cells = [c.strip() for c in row.strip().strip("│").split("│")]
        assert cells[2] == "1", row  # the 2nd game through the gateway
        assert cells[3] == "2", row  # the server played a bot-seat game and an absent-seat game alone
        assert int(cells[6]) >= 1, row  # the bus game's deliberate out-of-turn command was refused
    flat = " ".join(text.split())
    assert "games: the bot games of each title this run plays" in flat
    assert "rejected: the one deliberate out-of-turn command of each bus game" in flat
    assert "All checks hold." in text
    assert "signed with keys made for this run (QUESTHALL_TOKEN_KEYS and QUESTHALL_RECEIPT_KEYS not set)" in flat


def test_demo_keep_names_the_namespace_and_game_ids_it_kept(redis_url):
    """``--keep``: the printed namespace and game ids reach the kept, finished games (then removed
    here); the line says they stay reachable with ``QUESTHALL_NAMESPACE=<ns> make serve`` running
    (the embedded Valkey stops with the demo: the bare variable fell through to another Redis)."""
    import re

    import redis

    out = io.StringIO()
    console = Console(file=out, width=200)
    ok = anyio.run(lambda: run_demo(redis_url, games=1, concurrency=1, console=console, title_names=["toy"], keep=True))
    text = out.getvalue()
    assert ok, text
    ns = re.search(r"Kept the games in namespace (\S+) \(finished\);", text).group(1)
    kept = next(line for line in text.splitlines() if line.startswith("Kept the games"))  # one line, never wrapped
    assert f"stay reachable with QUESTHALL_NAMESPACE={ns} make serve running" in kept, kept
    assert f"QUESTHALL_NAMESPACE={ns} questhall audit GAME_ID" in kept, kept
    ids = re.search(r"^  toy: (.+)$", text, re.M).group(1).split()
    assert len(ids) == 3, text  # one bot game and the two games the server plays alone
    row = next(line for line in text.splitlines() if line.startswith("│ toy "))
    assert [c.strip() for c in row.strip("│").split("│")][2] == "1", row  # --games 1: its one game via the gateway
    r = redis.Redis.from_url(redis_url)
    try:
        for gid in ids:
            metas = list(r.scan_iter(match=f"{ns}:*:g:{gid}:meta", count=1000))
            assert len(metas) == 1, (gid, metas)
            assert r.hget(metas[0], "status") == b"finished"
    finally:
        for key in r.scan_iter(match=f"{ns}:*", count=1000):  # only the demo's own namespace
            r.delete(key)
        r.close()


def test_a_stopped_demo_deletes_its_namespace_and_says_so_in_one_line(redis_url):
    """Ctrl-C (SIGINT) or SIGTERM while the games play: the run stops, its namespace is deleted,
    stderr says so in one line, no traceback; exit 128 + the signal (a newcomer's finding: the
    namespace stayed, and Ctrl-C printed a 500-line traceback)."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import redis

    r = redis.Redis.from_url(redis_url)

    def namespaces() -> set[str]:
        return {k.decode().split(":", 1)[0] for k in r.scan_iter(match="demo-*", count=1000)}

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            before = namespaces()
            proc = subprocess.Popen([sys.executable, "-m", "services.cli", "demo", "--games", "50", "--concurrency", "1"],
                                    cwd=Path(__file__).resolve().parents[1], env={**os.environ, "REDIS_URL": redis_url},
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                for line in proc.stdout:
                    if line.startswith("Gateway on "):
                        break
                ours = namespaces() - before
                assert len(ours) == 1, ours  # the run's namespace holds keys: its games are playing
                proc.send_signal(sig)
                out, errs = proc.communicate(timeout=120)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            assert proc.returncode == 128 + sig, (proc.returncode, errs[-2000:])
            assert errs.splitlines() == ["Stopped before the end: its namespace is deleted."], errs[-2000:]
            assert "Traceback" not in out + errs
            (ns,) = ours
            assert not list(r.scan_iter(match=f"{ns}:*", count=1000))
    finally:
        r.close()
