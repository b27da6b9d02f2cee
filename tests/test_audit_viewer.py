"""The browser verifier (clients/web/audit/verify.js) agrees with `questhall audit`: node's test
runner checks its verdict and first bad version on bundles of every title played on the bus, on
signed games with receipts, on long in-memory games reaching every chance derivation
(tests/audit_games.py: reshuffles, the Fate Deck rebuild, random discards and thefts, reward
deals), and on tampered copies (a payload edited, a chain link broken, a chance outcome changed
and re-chained, an event's salt changed, made a non-string or removed and re-chained, a receipt
forged, a record forged under receipts); every chance outcome it re-derives equals the draw the
Python rules made (recorded here), and every command that drew is re-derived."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path

import anyio
import msgspec
import pytest

from schemas.envelope import CommandEnvelope
from services.adapters.client import BusClient
from services.audit.store import export_bundle
from services.audit.verify import audit_bundle, bundle_of, encode_bundle, raw_hash
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.chance import SeededChance, derive_key
from services.kernel.registry import codec as get_codec
from services.kernel.runner import LocalGame
from services.local.demo import TitleStats, play_bot_game
from services.runtime.serve import services_running
from tests.audit_games import LONG_GAMES, play, tamper_roll
from tests.signed_games import forge, reseal, signed_game

ROOT = Path(__file__).resolve().parent.parent
AUDIT = ROOT / "clients" / "web" / "audit"
LANDED = ["questeros", "orion_duel", "quests_over_coffee", "eros_quest", "fate_deck", "reventure_orbtale", "orange_quest"]
SEATS = {"eros_quest": 1, "fate_deck": 3, "questeros": 3}
CHANCE_EVENTS = {  # an event per title whose chance the browser re-derives, and how to change it
    "questeros": "questeros.hands_dealt", "eros_quest": "eros_quest.adventure_set_up",
    "fate_deck": "fate_deck.session_opened", "quests_over_coffee": "qoc.rolled",
    "orion_duel": "orion_duel.tokens_placed", "reventure_orbtale": "reventure_orbtale.game_set_up",
    "orange_quest": "orange_quest.game_set_up",
}


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the browser verifier's tests run on node >= 20; .ci/run installs nodejs)")
    major = int(subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v").split(".")[0])
    if major < 20:
        pytest.skip(f"node {major} has no WebCrypto Ed25519 (needs >= 20)")
    return node


class _Recorded(SeededChance):
    """SeededChance logging each top-level draw's outcome (a die, a coin, an index, a shuffle)."""

    def __init__(self, key: bytes, version: int) -> None:
        super().__init__(key, version)
        self.log: list = []
        self._depth = 0

    def _wrap(self, name, *args):
        self._depth += 1
        try:
            out = getattr(SeededChance, name)(self, *args)
        finally:
            self._depth -= 1
        if self._depth == 0:
            self.log.append(list(out) if name == "shuffle" else out)
        return out

    def randbelow(self, n):
        return self._wrap("randbelow", n)

    def die(self, sides=6):
        return self._wrap("die", sides)

    def coin(self):
        return self._wrap("coin")

    def shuffle(self, items):
        return self._wrap("shuffle", items)


def python_draws(bundle: dict) -> dict[str, list]:
    """Per command (by version before), the outcomes the rules drew, re-deciding with the seed."""
    c = get_codec(bundle["title"])
    seed = bytes.fromhex(bundle["seed"])
    game = lifecycle.new_game(bundle["game_id"], c.title.name)
    typed = [c.convert_event(e, game_id=bundle["game_id"], version=e["version"]) for e in bundle["events"]]
    out: dict[str, list] = {}
    for entry in bundle["commands"]:
        ch = _Recorded(derive_key(seed, game.client_seeds), game.version)
        cmd = msgspec.convert(entry["command"], CommandEnvelope[c.command_union])
        lifecycle.decide(c.title, game, cmd, ch, seed)
        if ch.log:
            out[str(entry["version_before"])] = ch.log
        for env in typed[entry["version_before"]:entry["version_after"]]:
            game = lifecycle.evolve(c.title, game, env)
    return out


OPTION_GAMES = [  # in memory: setups the bus games above do not cover
    ("quests_over_coffee", 2, {"mode": "coop", "quest_board": True, "environments": True, "companions": True}),
    ("quests_over_coffee", 1, {"environments": True, "companions": True}),
    ("orion_duel", 2, {"setup": "manual"}),
    ("orion_duel", 2, {"match_games": 3}),
    ("fate_deck", 4, {}),
]


def option_game(name: str, seats: int, options: dict, seed: int) -> dict:
    """A finished game of bots (each title's best, then random) with these options, as a bundle."""
    t = get_title(name)
    g = LocalGame(t, game_id=f"{name}-o{seed}", seed=bytes([seed]) * 32)
    g.create_and_start(seats, options)
    rng = random.Random(seed)
    bots = list(t.bots.values())
    for _ in range(3000):
        if g.game.status != "active":
            break
        s = t.to_move(g.game.rules)[0]
        g.submit(bots[s % len(bots)](t.view(g.game.rules, s), s, rng), s)
    assert g.game.status == "finished", (name, options)
    return bundle_of(g.game.game_id, g.events, g.commands)


def _change_chance(b: dict) -> dict | None:
    """The first re-derivable chance outcome changed (two cards, two tokens or a die), the chain re-sealed."""
    want = CHANCE_EVENTS.get(b["title"])
    t = copy.deepcopy(b)
    for e in t["events"]:
        body = e["body"]
        if body["type"] != want:
            continue
        if "galaxies" in body:  # a random token placement: a galaxy and a black hole swapped
            body["galaxies"][0], body["black_holes"][0] = body["black_holes"][0], body["galaxies"][0]
        elif "deck" in body and len(body["deck"]) > 1:
            body["deck"][0], body["deck"][1] = body["deck"][1], body["deck"][0]
        else:
            dice = body["pool"][0] if body["pool"] else body["base"]
            dice[0] = dice[0] % 6 + 1
        return reseal(t)
    return None


def salt_edits(b: dict):
    """(kind, bundle) of a salted game with a revealed seed: one event's salt wrong, a number or
    a list, or event 1's removed (one salted event makes a salted game), the chain re-sealed so
    only the salt checks can tell (docs/fairness.md "Hash chain")."""
    if not (b.get("seed") and any(e.get("salt") for e in b["events"])):
        return
    mid = len(b["events"]) // 2
    for kind, i, salt in (("salt", mid, "0" * 32), ("salt_number", mid, 5), ("salt_list", mid, []),
                          ("salt_stripped", 0, None)):
        t = copy.deepcopy(b)
        t["events"][i]["salt"] = salt
        if salt is None:
            del t["events"][i]["salt"]
        yield kind, reseal(t)


def tampered(b: dict, receipts: dict | None):
    """(kind, bundle, receipts) variants of one bundle."""
    n = len(b["events"])
    edited = copy.deepcopy(b)  # a payload changed, the chain left as it was
    body = edited["events"][n // 2]["body"]
    body["tampered"] = True
    yield "payload", edited, None
    link = copy.deepcopy(b)  # a chain link broken: an event's prev_hash replaced and its hash redone
    link["events"][n // 3]["prev_hash"] = "ab" * 32
    link["events"][n // 3]["hash"] = raw_hash(link["events"][n // 3])
    yield "link", link, None
    moved = _change_chance(b)
    if moved is not None:
        yield "chance", moved, None
    for kind, salted in salt_edits(b):
        yield kind, salted, None
    if receipts is not None:
        bad = copy.deepcopy(receipts)
        r = bad["receipts"][len(bad["receipts"]) // 2]
        r["head_hash"] = "cd" * 32  # a receipt for a head the deployment never signed
        yield "receipt", b, bad
        forged = forge(b, strip_keys=True)
        if forged is not None:
            yield "forged", forged, receipts


@pytest.fixture(scope="module")
def bus_bundles(redis_url):
    """One game of every title played by bots through the bus, exported from Redis."""
    import uuid

    from services.adapters.redis_store import Settings

    settings = Settings(url=redis_url, namespace=f"av{uuid.uuid4().hex[:10]}", partitions=2)

    async def main():
        out = []
        async with services_running(settings, titles=LANDED) as s:
            c = BusClient(s["redis"], settings)
            for i, name in enumerate(LANDED):
                stats = TitleStats()
                await play_bot_game(c, name, SEATS.get(name, 2), random.Random(19 + i), stats)
                assert stats.finished == 1 and not stats.failures, stats.failures
                out.append(await export_bundle(s["redis"], settings, stats.game_ids[0]))
        return out

    return anyio.run(main)


def test_the_browser_verifier_agrees_with_questhall_audit(bus_bundles, tmp_path):
    node = _node()
    games = [(b, None) for b in bus_bundles]
    games += [signed_game(name, seats, 40 + k) for k, (name, seats) in
              enumerate([("questeros", 2), ("quests_over_coffee", 2), ("fate_deck", 3), ("orion_duel", 2)])]
    games += [(option_game(name, seats, options, 60 + k), None) for k, (name, seats, options) in enumerate(OPTION_GAMES)]
    games += [(play(*spec), None) for spec in LONG_GAMES]
    cases, kinds = [], set()
    for gi, (bundle, receipts) in enumerate(games):
        variants = [("valid", bundle, receipts), *tampered(bundle, receipts)]
        roll = tamper_roll(bundle, random.Random(gi))
        if roll is not None:
            variants.append(("roll", roll[0], None))
        if gi == 0:  # rules the verifiers do not have: an error verdict in both
            variants += [("rules", {**bundle, "rules_version": "0"}, None), ("title", {**bundle, "title": "nosuch"}, None)]
        for kind, b, r in variants:
            verdict = audit_bundle(b, r)
            name = f"{gi}-{b['title']}-{kind}"
            (tmp_path / f"{name}.json").write_bytes(encode_bundle(b))
            if r is not None:
                (tmp_path / f"{name}.receipts.json").write_text(json.dumps(r))
            assert verdict.status == ("valid" if kind == "valid" else "error" if kind in ("receipt", "rules", "title")
                                      else "invalid"), \
                (name, verdict.summary())
            if kind.startswith("salt"):  # named at the event whose salt changed
                changed = [e["version"] for e, o in zip(b["events"], bundle["events"], strict=True) if e.get("salt") != o.get("salt")]
                assert [verdict.first_bad_version] == changed, (name, verdict.summary())
            cases.append({"name": name, "bundle": f"{name}.json", "receipts": f"{name}.receipts.json" if r else None,
                          "status": verdict.status, "first_bad_version": verdict.first_bad_version,
                          "draws": python_draws(b) if kind == "valid" else None})
            kinds.add(kind)
    assert {"valid", "payload", "link", "chance", "receipt", "forged", "salt", "salt_number", "salt_list",
            "salt_stripped"} <= kinds
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    res = subprocess.run([node, "--test", str(AUDIT / "test")], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "QH_AUDIT_CASES": str(tmp_path)}, timeout=600)
    print(res.stdout[-3000:], res.stderr[-3000:])
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert f"# pass {len(cases) + 4}" in res.stdout or "# fail 0" in res.stdout


def test_the_content_module_is_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", ROOT / "tools" / "gen_audit_content.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (AUDIT / "content.js").read_text(encoding="utf-8") == gen.render(), \
        "run tools/gen_audit_content.py: the title content changed"
