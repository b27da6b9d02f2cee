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
        assert cells[3] == "2", row  # the server played a bot-seat game and an absent-seat game alone
    assert "All checks hold." in text
