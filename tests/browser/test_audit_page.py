"""/audit in a real headless Chromium: a game played through the gateway (seat keys, receipts kept
by the SDK) opens by id and shows VALID, with every event, its chance derivation and the public
state after it; tampered copies dropped as files show the first bad version `questhall audit`
names (a payload edited, a chain link broken, a die changed and re-chained, a salt changed or
made a non-string and re-chained, a record forged under receipts) and a forged receipt is an ERROR. A screenshot of the viewer goes to
$QUESTHALL_SCREENSHOTS (docs/screenshots when refreshing the README's picture), else tmp."""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

import anyio
import pytest

from services.audit.verify import audit_bundle, counted, encode_bundle, spectator_views
from services.sdk import Gateway, play_bot_game
from tests.signed_games import forge
from tests.test_audit_viewer import _change_chance, tampered


@pytest.fixture(scope="module")
def played(web_gateway):
    """A finished two-seat Quests Over Coffee game (dice) with its bundle and the receipts kept."""

    async def main():
        async with Gateway(web_gateway.url) as gw:
            gid, _final, _ = await play_bot_game(gw, "quests_over_coffee", 2, random.Random(7))
            bundle = await gw.request("GET", f"/games/{gid}/bundle")
            return gid, bundle, await _doc(gw, gid)

    return anyio.run(main)


async def _doc(gw: Gateway, gid: str) -> dict:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.json"
        await gw.save_receipts(gid, path)
        return json.loads(path.read_text())


def _verdict(page) -> str:
    return page.wait(lambda p: p.js("return document.getElementById('verdict-box').dataset.status || ''"), "no verdict")


def test_a_real_game_opens_by_id_and_shows_valid_with_every_event(browser, web_gateway, played, tmp_path):
    gid, bundle, _ = played
    assert audit_bundle(bundle).status == "valid"
    rolled = next(e["version"] for e in bundle["events"] if e["body"]["type"] == "qoc.rolled")
    page = browser.page(f"{web_gateway.url}/audit/#game={gid}&v={rolled}")
    assert _verdict(page) == "valid"
    assert page.text("#verdict-status") == "VALID"
    # nothing bad: no "First bad version:" label at all (not an empty one), in the DOM or the page's HTML
    assert page.js("return document.getElementById('first-bad').textContent") == "" and not page.css("#goto-bad")
    assert "First bad version" not in (Path(__file__).resolve().parents[2] / "clients/web/audit/index.html").read_text()
    assert len(page.css("#events li")) == len(bundle["events"])
    assert page.text("#position") == f"version {rolled} / {len(bundle['events'])}"
    # the dice of that roll, each with its derivation, re-derived in the browser
    body = bundle["events"][rolled - 1]["body"]
    dice = [*sum(body["pool"], []), *body["base"], *body["extra"]]
    draws = page.wait(lambda p: p.css("#draws li.this-event"), "no draw shown for the roll")
    assert [json.loads(d.get_attribute("data-value")) for d in draws] == dice
    assert all(d.get_attribute("data-kind") == "die" and "1 + randbelow(6)" in d.text for d in draws)
    assert "HMAC-SHA256" in page.text("#chance-key")
    # the public state after the event, from the gateway's replay: readable (a table of its
    # fields, records as rows), the raw JSON one click away
    page.wait(lambda p: "Spectator view after version" in p.text("#state-note"), "no state after the event")
    want = spectator_views(bundle)[rolled - 1]["view"]
    fields = page.js("return [...document.querySelectorAll('#state-view > table.state > tbody > tr, #state-view > table.state > tr')]"
                     ".map(tr => tr.dataset.field)")
    assert fields == [k for k, x in want.items() if not (k == "legal" and x == [])], fields
    players = next(k for k, x in want.items() if isinstance(x, list) and x and isinstance(x[0], dict))
    rows = page.css(f"#state-view tr[data-field={players}] table.rows tr")
    assert len(rows) == len(want[players]) + 1  # a header and a row per record
    assert page.css("#state-raw:not([open])") and json.loads(page.js("return document.getElementById('state-body').textContent")) == want
    page.click("#state-raw summary")
    assert page.one("#state-body").is_displayed()
    shots = Path(os.environ.get("QUESTHALL_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    size = page.driver.get_window_size()
    page.driver.set_window_size(1280, 1500)
    try:
        page.js("document.getElementById('verdict').scrollIntoView()")
        page.screenshot(str(shots / "audit.png"))
    finally:
        page.driver.set_window_size(size["width"], size["height"])
    assert (shots / "audit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.click("#next")
    assert page.text("#position").startswith(f"version {rolled + 1} /")
    page.wait(lambda p: f"after version {rolled + 1}" in p.text("#state-note"))
    assert not page.console_errors()


def test_tampered_bundles_name_the_first_bad_version(browser, web_gateway, played, tmp_path):
    _gid, bundle, receipts = played
    cases = {kind: (b, r) for kind, b, r in tampered(bundle, receipts)}
    assert _change_chance(bundle) is not None and {"payload", "link", "chance", "receipt", "salt", "salt_number"} <= set(cases)
    forged = forge(bundle, strip_keys=True)
    if forged is not None:
        cases["forged"] = (forged, receipts)
    for kind, (b, r) in cases.items():
        want = audit_bundle(b, r)
        path = tmp_path / f"{kind}.json"
        path.write_bytes(encode_bundle(b))
        page = browser.page(f"{web_gateway.url}/audit/")
        if r is not None:
            (tmp_path / f"{kind}.receipts.json").write_text(json.dumps(r))
            page.one("#receipts-file").send_keys(str(tmp_path / f"{kind}.receipts.json"))
        page.one("#bundle-file").send_keys(str(path))
        assert _verdict(page) == want.status, (kind, want.summary())
        if want.status == "invalid":
            assert page.text("#goto-bad") == f"version {want.first_bad_version}", (kind, want.summary())
            bad = page.one("#events li.bad")
            assert bad.get_attribute("data-version") == str(want.first_bad_version)
            assert page.text("#position").startswith(f"version {min(want.first_bad_version, len(b['events']))} /")
            if kind.startswith("salt"):  # the salt checks, not the chain's hash, caught it
                assert "salt" in page.text("#verdict-reason") and "hash" not in page.text("#verdict-reason"), kind
        else:
            assert kind == "receipt" and want.status == "error" and page.text("#verdict-status") == "ERROR"
    # an untouched copy of the same game dropped as a file: VALID, with its receipts too
    path = tmp_path / "same.json"
    path.write_bytes(encode_bundle(copy.deepcopy(bundle)))
    (tmp_path / "same.receipts.json").write_text(json.dumps(receipts))
    page = browser.page(f"{web_gateway.url}/audit/")
    page.one("#receipts-file").send_keys(str(tmp_path / "same.receipts.json"))
    page.one("#bundle-file").send_keys(str(path))
    assert _verdict(page) == "valid"
    assert f"receipts: {counted(len(receipts['receipts']), 'signed head')} held" in page.text("#checks")


@pytest.fixture(scope="module")
def long_games(tmp_path_factory):
    """The long seeded games of every title (tests/audit_games.py) and a tampered roll of each,
    as bundle files, with `questhall audit`'s verdict and the commands whose chance Python drew."""
    from tests.audit_games import LONG_GAMES, play, tamper_roll
    from tests.test_audit_viewer import python_draws

    d = tmp_path_factory.mktemp("long")
    out = []
    for k, spec in enumerate(LONG_GAMES):
        b = play(*spec)
        roll = tamper_roll(b, random.Random(k))
        assert roll is not None, spec
        for kind, bb in (("valid", b), ("roll", roll[0])):
            path = d / f"{k}-{spec[0]}-{kind}.json"
            path.write_bytes(encode_bundle(bb))
            out.append((kind, path, audit_bundle(bb), len(python_draws(bb)) if kind == "valid" else None, roll[1]))
    return out


def test_the_browser_verdict_equals_questhall_audit_on_long_games_of_every_title(browser, web_gateway, long_games):
    """Every title's long game (reshuffles, the Fate Deck rebuild, random discards and thefts,
    coin flips, reward deals) dropped on /audit: VALID like `questhall audit`, with every command
    that drew chance re-derived in the browser; a roll changed and re-chained: INVALID at the
    version `questhall audit` names, which is the changed one."""
    page = browser.page(f"{web_gateway.url}/audit/")
    titles = set()
    for kind, path, want, drew, changed in long_games:
        page.js("document.getElementById('verdict-box').dataset.status = ''")
        page.one("#bundle-file").send_keys(str(path))
        got = _verdict(page)
        assert got == want.status, (path.name, want.summary(), page.text("#verdict-reason"))
        if kind == "valid":
            assert want.status == "valid", want.summary()
            checks = page.text("#checks")
            assert f"chance: {drew} of {drew} commands that drew chance re-derived" in checks, (path.name, checks)
            titles.add(want.title)
        else:
            assert want.status == "invalid" and want.first_bad_version == changed, want.summary()
            assert page.text("#goto-bad") == f"version {changed}", (path.name, want.summary(), page.text("#verdict-reason"))
            assert "differs from the chance its seed derives" in page.text("#verdict-reason"), page.text("#verdict-reason")
    from services.kernel.registry import titles as registered

    assert titles == set(registered()) - {"toy"}, titles  # every shipped title (toy: the tests' own)
    # games played in memory are not on this server: the page's ask for their state is a 404
    assert not [e for e in page.console_errors() if "/replay?" not in e]
