"""``questhall play`` driven in a pseudo-terminal through a whole short game (real gateway, real Redis)."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pexpect
import pytest

QUESTHALL = str(Path(sys.executable).with_name("questhall"))


@pytest.mark.parametrize(("title", "extra"), [("quests_over_coffee", []), ("orion_duel", ["--seats", "2"]),
                                              ("fate_deck", ["--seats", "3"]),
                                              ("reventure_orbtale", ["--seats", "2", "--option", "chapter_limit=3"]),
                                              ("orange_quest", ["--seats", "2", "--option", "days=4"])])
def test_play_a_short_game_in_a_terminal(gateway, title, extra, tmp_path):
    # QUESTHALL_DATA: the receipts it keeps go to the test's folder, not the checkout's .questhall
    # (where a developer's own `questhall play` receipts live: a newcomer's finding)
    env = dict(os.environ, QUESTHALL_NAMESPACE=gateway.settings.namespace, COLUMNS="200", QUESTHALL_DATA=str(tmp_path / "data"))
    env.pop("QUESTHALL_EXTRA_TITLES", None)  # the test-only title is not importable from the child
    child = pexpect.spawn(QUESTHALL, ["play", "--url", gateway.url, "--title", title, "--name", "Tess", "--seed", "5", *extra],
                          env=env, encoding="utf-8", timeout=30, dimensions=(50, 200))
    screen = child.logfile_read = io.StringIO()

    class Over(Exception):
        """GAME OVER came (the bots may end the game between our prompt and our word)."""

    def expect(pattern):
        patterns = pattern if isinstance(pattern, list) else [pattern]
        i = child.expect([*patterns, "GAME OVER"])
        if i == len(patterns):
            raise Over
        return i

    try:
        child.expect("Type help")
        moves = 0
        first = True
        try:
            while True:
                expect("your move> ")
                if first:  # the words of the kit, and a helpful error, once
                    first = False
                    child.sendline("help")
                    expect("Also: help, moves")
                    expect("your move> ")  # the prompt comes back after every local word
                    child.sendline("moves")
                    expect(r"\d+ moves: ")
                    expect("your move> ")
                    child.sendline("dance")
                    expect(r"\? Unknown word 'dance'")
                    expect("your move> ")
                child.sendline("hint")
                if expect([r"hint: \(not your move\)", r"hint: ([^\r\n]+)\r\n"]) == 0:
                    continue  # a prompt printed twice for one turn (two views pushed): the game moved on
                suggestion = child.match.group(1)
                expect("your move> ")
                assert not suggestion.startswith("(")
                child.sendline(suggestion)
                moves += 1
                assert moves < 200
        except Over:
            pass
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    # we moved at least once; how many of our moves a game takes depends on when the bots' views arrive (a prompt
    # printed twice for one turn is skipped above), and an Orbtale game may end at once by four orbs drawn after the
    # hero pick (rulebook: instant win)
    assert moves >= (0 if title == "reventure_orbtale" else 1)
    out = screen.getvalue()
    assert "Waiting for players" not in out  # bots took the other seats: nobody is awaited
    if title == "orion_duel":  # the board is drawn again after every move, the bots' and ours
        assert out.count("B Blue  O Orange") >= 2 * moves
    if title == "quests_over_coffee":  # the cards of the view named with their texts
        assert ": Gain " in out or " star; fail at " in out


def _spawn(gateway, tmp_path, *args):
    env = dict(os.environ, QUESTHALL_NAMESPACE=gateway.settings.namespace, COLUMNS="200")
    env.pop("QUESTHALL_EXTRA_TITLES", None)
    env.pop("QUESTHALL_DATA", None)
    return pexpect.spawn(QUESTHALL, ["play", "--url", gateway.url, *args], env=env, cwd=str(tmp_path),
                         encoding="utf-8", timeout=30, dimensions=(50, 200))


def test_bots_take_the_open_seats_in_the_sorted_rotation_its_help_describes(gateway, tmp_path):
    """Seat N gets the title's bots in name order, the one at N mod their count, as ``play
    --help`` and docs/gateway.md ("Terminal client") say: a 3-seat Questeros game (bots
    ``bidder``, ``random``) seats random at 1 and bidder at 2."""
    from typer.testing import CliRunner

    from services.cli import app
    from services.kernel import get_title

    helped = CliRunner().invoke(app, ["play", "--help"], terminal_width=200)
    assert helped.exit_code == 0, helped.output
    assert ("The bots take the open seats in a sorted rotation: seat N gets the title's bots in name order, the one "
            "at N mod their count (Questeros, 3 seats: seat 1 random, seat 2 bidder;") in " ".join(helped.output.split())
    assert sorted(get_title("questeros").bots) == ["bidder", "random"]
    child = _spawn(gateway, tmp_path, "--title", "questeros", "--seats", "3", "--name", "Tess")
    try:
        child.expect(r"A (\S+) bot took seat 1\.")
        first = child.match.group(1)
        child.expect(r"A (\S+) bot took seat 2\.")
        assert (first, child.match.group(1)) == ("random", "bidder")
        child.expect("Type help")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


@pytest.mark.parametrize(("key", "status"), [("eof", 1), ("intr", 130)])
def test_end_of_input_is_quit_and_ctrl_c_keeps_the_receipts_too(gateway, tmp_path, key, status):
    """Ctrl-D at the prompt (end of input) behaves like ``quit``: exit 1 with the receipts kept (it
    looped for ever); Ctrl-C exits 130 and keeps them too (it lost them). A newcomer's finding."""
    child = _spawn(gateway, tmp_path, "--title", "orion_duel", "--name", "Tess")
    try:
        child.expect("your move> ")
        child.sendeof() if key == "eof" else child.sendintr()
        child.expect(r"Receipts kept in (\S+) ")
        kept = child.match.group(1)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == status, child.before
    assert (tmp_path / kept).is_file()


def test_two_terminals_of_one_game_in_one_folder_keep_one_receipts_file_each(gateway, tmp_path):
    """``--open`` in one terminal and ``--join`` in another, in the same folder: each seat's
    receipts go to their own ``<game>.seat<N>.json`` (one ``<game>.json``: the last writer won)."""
    a = _spawn(gateway, tmp_path, "--title", "orion_duel", "--name", "Ann", "--open")
    b = None
    try:
        a.expect(r"questhall play --join (\S+)")
        gid = a.match.group(1)
        b = _spawn(gateway, tmp_path, "--join", gid, "--name", "Bob")
        b.expect("Type help")
        a.expect("Type help")  # whoever moves first: end of input quits either
        kept = []
        for child in (a, b):
            child.sendeof()
            child.expect(r"Receipts kept in (\S+) \(questhall audit ")
            kept.append(child.match.group(1))
            child.expect(pexpect.EOF)
    finally:
        a.close(force=True)
        if b is not None:
            b.close(force=True)
    assert kept == [f".questhall/receipts/{gid}.seat0.json", f".questhall/receipts/{gid}.seat1.json"]
    for path in kept:
        doc = json.loads((tmp_path / path).read_text())
        assert doc["format"] == "questhall-receipts/1" and doc["game_id"] == gid


def test_joining_a_game_of_a_title_this_terminal_does_not_know_says_so_in_one_line(gateway, tmp_path):
    """``questhall play --join`` of a game whose title the gateway serves but this questhall has no
    module of (here the test-only toy title): one line naming it and the known titles, exit 2 (a
    KeyError traceback; the seat it took is left to the lobby)."""
    import anyio

    from services.sdk import Gateway

    async def create() -> str:
        async with Gateway(gateway.url) as gw:
            return (await gw.create("toy", 2, {})).game_id

    gid = anyio.run(create)
    child = _spawn(gateway, tmp_path, "--join", gid, "--name", "Bob")
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    out = " ".join(child.before.split())
    assert child.exitstatus == 2, out
    assert f"Game {gid} is of title 'toy', which this questhall does not know; known: " in out and "Traceback" not in out


def test_lines_piped_before_the_first_view_are_answered_on_it(gateway, tmp_path):
    """Words that arrive before the first view (piped input) wait for it: ``moves`` lists the
    seat's moves and ``hint`` names one (they answered on no view: ``0 moves:`` and ``hint: (not
    your move)`` at seat 0's move; a newcomer's finding). Input then ends: exit 1."""
    import subprocess

    env = dict(os.environ, QUESTHALL_NAMESPACE=gateway.settings.namespace, COLUMNS="200")
    env.pop("QUESTHALL_EXTRA_TITLES", None)
    env.pop("QUESTHALL_DATA", None)
    done = subprocess.run([QUESTHALL, "play", "--url", gateway.url, "--title", "quests_over_coffee", "--name", "Tess"],
                          input="moves\nhint\n", capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=60)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    moves = [line for line in out.splitlines() if " moves: " in line]
    assert moves and not moves[0].startswith("0 moves"), out
    hints = [line for line in out.splitlines() if line.startswith("hint: ")]
    assert hints and hints[0] != "hint: (not your move)" and not hints[0].startswith("hint: ("), out
