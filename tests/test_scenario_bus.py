"""Scenario files played through the real bus (Redis, worker, projector), and the CLI's verdicts."""

from __future__ import annotations

from pathlib import Path

import anyio
from typer.testing import CliRunner

from services.cli import app
from services.local.scenario_bus import run_files

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("scenarios/**/*.toml"), *ROOT.glob("scenarios/**/*.json")]) + [ROOT / "tests/scenarios/toy_race.toml"]


def test_every_scenario_file_passes_through_redis(redis_url):
    reports = anyio.run(run_files, FILES, redis_url)
    failed = {r.scenario.path: [f"{s.label}: {s.detail}" for s in r.steps if not s.ok] for r in reports if not r.ok}
    assert not failed
    assert len(reports) == len(FILES) and sum(len(r.steps) for r in reports) > len(FILES)


def test_scenario_run_exits_0_when_all_pass_and_1_when_a_step_fails(redis_url, tmp_path, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_url)
    good = ROOT / "tests/scenarios/toy_race.toml"
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace('expect = "rejected:not_your_turn"', 'expect = "accepted"'))
    runner = CliRunner()
    ok = runner.invoke(app, ["scenario", "run", str(good)])
    assert ok.exit_code == 0, ok.output
    assert "1 passed, 0 failed" in ok.output
    res = runner.invoke(app, ["scenario", "run", str(good), str(bad)])
    assert res.exit_code == 1
    assert "FAIL" in res.output and "expected accepted, got rejected:not_your_turn" in res.output
    chance = tmp_path / "chance.toml"
    chance.write_text(good.read_text().replace("shuffle = [7, 3]", "shuffle = [99]"))
    res = runner.invoke(app, ["scenario", "run", str(chance), str(good)])
    assert res.exit_code == 1, res.output
    assert "the scripted chance cannot be honoured" in res.output and "99" in res.output
    assert "1 passed, 1 failed" in res.output  # the file after the unhonourable one still ran
    missing = runner.invoke(app, ["scenario", "run", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 1 and "nope.toml" in missing.output
