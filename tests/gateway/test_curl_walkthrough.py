"""The ``curl`` walk-through of docs/gateway.md runs as written: its ```sh blocks, in one bash
with the real ``curl``, play a Reventure: Orbtale game against a real gateway (you in seat 0,
the server's random bot in seat 1), and the refusals it shows are the ones the gateway gives.

The blocks wait for projections with the API's ``min_version``, never with a sleep; the game's
chance comes from its secret seed, so the blocks send whatever command the view lists first.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "gateway.md"
SECTION = "## Walk-through with curl"
DOC_URL = "Q=http://127.0.0.1:8000/v1"
REFUSALS = [("not_owner", 403), ("not_in_lobby", 409), ("bad_command", 422)]
REFUSAL = re.compile(r'^(?:# )?\{"code":"([a-z_]+)".* (\d{3})$')


def walkthrough_blocks() -> list[str]:
    """The ```sh blocks of the section, in order."""
    text = DOC.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(r"^```sh\n(.*?)^```$", text[start:end], re.S | re.M)


def refusals(lines: list[str]) -> list[tuple[str, int]]:
    """(code, status) of every line that is an error body followed by curl's ``%{http_code}``."""
    return [(m.group(1), int(m.group(2))) for m in map(REFUSAL.match, lines) if m]


def test_the_curl_walkthrough_plays_orbtale_as_documented(gateway):
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl not installed: the docs/gateway.md walk-through needs it (.ci/run installs it)")
    blocks = walkthrough_blocks()
    script = "\n".join(blocks)
    assert len(blocks) >= 7 and script.count(DOC_URL) == 1 and "jq" not in script
    env = dict(os.environ)
    if shutil.which("python3") is None:  # the doc's get() needs a python3, any one
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    run = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script.replace(DOC_URL, f"Q={gateway.url}/v1")
         + '\nprintf "\\nRESULT %s %s %s\\n" "$GAME" "$STARTED" "$V"\n'],
        capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()

    assert refusals(out) == REFUSALS
    assert refusals(script.splitlines()) == REFUSALS  # the doc shows the statuses and codes a run gives
    game, started, version = out[-1].split()[1:]
    assert int(started) == 6  # created, two joins, the bot seat, started, set up
    assert int(version) > int(started)
    assert "reventure_orbtale.revealed" in run.stdout  # the feed read waited for the bot's pick
    with urllib.request.urlopen(f"{gateway.url}/v1/games/{game}/view?min_version={int(version) + 1}") as r:
        view = json.load(r)
    assert view["status"] == "active" and view["version"] > int(version)
    assert view["view"]["phase"] != "hero_pick"  # both heroes picked: the bot plays on by itself
    assert [s["name"] for s in view["seats"]] == ["Ann", "random bot"]
