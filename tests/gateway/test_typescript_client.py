"""The TypeScript SDK (clients/typescript, issue 19) against a real gateway: node's test runner
(``node --test``) plays a whole game of every title through it, resumes dropped sockets by
``since``, verifies receipts with WebCrypto; and the committed generated types are up to date.

Node and npm come from the machine (``.ci/run`` installs them when absent); without them these
tests skip with the reason printed. ``npm ci`` runs from the lock file when node_modules is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from services.gateway.app import openapi_document
from services.kernel import titles

TS_DIR = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def _tools() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        print("SKIP: node/npm not installed; the TypeScript SDK tests did not run")
        pytest.skip("node/npm not installed: the TypeScript SDK tests need them")
    return node, npm


def build_sdk() -> str:
    """node_modules from the lock (``npm ci`` when missing) and ``dist/`` compiled with tsc; returns node.

    Skips (printing why) without node/npm; fails when npm ci or tsc fails."""
    node, npm = _tools()
    if not all((TS_DIR / "node_modules" / p).exists() for p in ("typescript", "ws", "openapi-typescript")):
        out = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=TS_DIR, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, f"npm ci failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    out = subprocess.run([node, "node_modules/typescript/bin/tsc", "-p", "."], cwd=TS_DIR, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"tsc failed:\n{out.stdout[-3000:]}"
    shutil.copyfile(TS_DIR / "src" / "api.d.ts", TS_DIR / "dist" / "api.d.ts")
    return node


@pytest.fixture(scope="module")
def built() -> str:
    return build_sdk()


def test_generated_types_are_up_to_date(built, tmp_path):
    """As ``make client-types`` writes them: from ``questhall schemas`` in a process of its own (the
    registered titles only, not the test suite's toy titles)."""
    env = {k: v for k, v in os.environ.items() if k != "QUESTHALL_EXTRA_TITLES"}
    subprocess.run([sys.executable, "-m", "services.cli", "schemas", "--out", str(tmp_path)], check=True,
                   capture_output=True, timeout=300, env=env)
    spec = tmp_path / "openapi.json"
    assert json.loads(spec.read_text())["components"]["schemas"].keys() <= openapi_document()["components"]["schemas"].keys()
    out = tmp_path / "api.d.ts"
    gen = TS_DIR / "node_modules" / "openapi-typescript" / "bin" / "cli.js"
    subprocess.run([built, str(gen), str(spec), "--root-types", "-o", str(out)], check=True, capture_output=True, timeout=300)
    assert out.read_text() == (TS_DIR / "src" / "api.d.ts").read_text(), \
        "clients/typescript/src/api.d.ts is not the OpenAPI's: run `make client-types` and commit it"


def test_node_test_runner_against_a_real_gateway(built, gateway):
    names = sorted(n for n, t in titles().items() if type(t).__module__.startswith("services.games"))
    assert {"questeros", "eros_quest", "fate_deck", "orion_duel", "quests_over_coffee", "reventure_orbtale"} <= set(names)
    env = {**os.environ, "QUESTHALL_URL": gateway.url, "QUESTHALL_TITLES": ",".join(names)}
    out = subprocess.run([built, "--test", "--test-reporter=spec", "test/"], cwd=TS_DIR, env=env,
                         capture_output=True, text=True, timeout=900)
    print(out.stdout[-6000:])
    assert out.returncode == 0, f"node --test failed:\n{out.stdout[-8000:]}\n{out.stderr[-2000:]}"
    counts = dict(re.findall(r"^\S+ (pass|fail|skipped|cancelled) (\d+)$", out.stdout, re.M))
    assert counts == {"pass": str(len(names) + 3), "fail": "0", "skipped": "0", "cancelled": "0"}, out.stdout[-1500:]
