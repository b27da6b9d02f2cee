"""Every scenario file under scenarios/ (and tests/scenarios/) passes when played in memory.

The same files are played through Redis by tests/test_scenario_bus.py and `questhall scenario run`.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from services.local.scenario import run_local

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("scenarios/**/*.toml"), *ROOT.glob("scenarios/**/*.json"), *ROOT.glob("tests/scenarios/*.toml")])


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_scenario_passes_in_memory(path: Path) -> None:
    rep = anyio.run(run_local, path)
    failures = [f"step {s.index} {s.label}: {s.detail}" for s in rep.steps if not s.ok]
    assert not failures, "\n".join(failures)
    assert rep.steps, "a scenario must check something"
