"""The terminal client's pieces (no gateway): cards named with their texts from the title content,
`hint` from each title's best bot, `board` as a word, `questhall titles` reading naturally."""

from __future__ import annotations

import random

import msgspec
import pytest
from typer.testing import CliRunner

from services.cli import app, seat_range
from services.frontends.cards import glossary, named_in
from services.frontends.chat import Action, format_command, parse
from services.frontends.play import Terminal
from services.gateway.service import title_detail
from services.kernel import game as lifecycle
from services.kernel import get_title, titles
from services.kernel.registry import best_bot
from services.kernel.runner import LocalGame

ALL = ["questeros", "orion_duel", "quests_over_coffee", "eros_quest", "fate_deck", "reventure_orbtale"]
SEATS = {"eros_quest": 1, "fate_deck": 3, "quests_over_coffee": 1}


class _Seat:
    """What Terminal needs of a SeatClient for local words: its seat, name and game."""

    def __init__(self, seat: int) -> None:
        self.seat, self.name, self.game_id = seat, "Tess", "g1"


def _terminal(title: str, seed: int = 1) -> tuple[Terminal, list[str], LocalGame]:
    t = get_title(title)
    g = LocalGame(t, game_id="g1", seed=bytes([seed]) * 32)
    g.create_and_start(SEATS.get(title, 2), {})
    lines: list[str] = []
    term = Terminal(_Seat(t.to_move(g.game.rules)[0]), title, lines.append, None, random.Random(5),
                    glossary(title, title_detail(title).content))
    term.env = msgspec.to_builtins(lifecycle.view(t, g.game, term.client.seat))
    return term, lines, g


@pytest.mark.parametrize("title", ALL)
def test_hint_comes_from_the_titles_best_bot_never_the_random_one(title):
    t = get_title(title)
    name = best_bot(t)
    assert name in t.bots and name != "random" and name == t.best_bot
    term, lines, _ = _terminal(title)
    term._action("hint", "hint")
    view = msgspec.convert(term.env["view"], t.view_type)
    want = format_command(title, t.bots[name](view, term.client.seat, random.Random(5)))
    assert lines == [f"hint: {want}"]


def test_the_orion_duel_hint_is_the_greedy_placement():
    t = get_title("orion_duel")
    term, lines, g = _terminal("orion_duel", seed=3)
    while g.game.rules.phase != "play":  # setup done by the rules' own first legal command
        s = t.to_move(g.game.rules)[0]
        g.submit(t.bots["greedy"](t.view(g.game.rules, s), s, random.Random(0)), s)
    s = t.to_move(g.game.rules)[0]
    term.client.seat = s
    term.env = msgspec.to_builtins(lifecycle.view(t, g.game, s))
    term._action("hint", "hint")
    greedy = format_command("orion_duel", t.bots["greedy"](t.view(g.game.rules, s), s, random.Random(5)))
    rnd = {format_command("orion_duel", t.bots["random"](t.view(g.game.rules, s), s, random.Random(k))) for k in range(5)}
    assert lines == [f"hint: {greedy}"] and rnd != {greedy}


def test_cards_are_shown_with_their_names_and_texts():
    term, lines, g = _terminal("questeros")
    hand = term.env["view"]["hand"]
    term._legend(hand_only=True)
    assert [line.split(":")[0].strip() for line in lines] == hand  # every card of the hand, in hand order
    cards = {c["id"]: c for c in title_detail("questeros").content["deck"]["card"]}
    for line, cid in zip(lines, hand, strict=True):
        assert cards[cid]["name"] in line
    lines.clear()
    term._legend(only="e2")
    assert lines == ["e2: The Mentor: Epic 2; on play: mentor look"]
    qoc = glossary("quests_over_coffee", title_detail("quests_over_coffee").content)
    assert qoc["tip-jar"] == "Tip Jar: Gain 3 Money."
    assert qoc["spilled-beans"].startswith("Spilled Beans: 1 star; fail at 6 or less")
    fate = glossary("fate_deck", title_detail("fate_deck").content)
    assert "Meaning: Endings, change, transformation, transition" in fate["e13"]
    eros = glossary("eros_quest", title_detail("eros_quest").content)
    assert "Encounter: Place 1 to 4 cards" in eros["e1"]
    orb = glossary("reventure_orbtale", title_detail("reventure_orbtale").content)
    assert orb["sword"] == "Sword: Deal 1 damage."
    assert named_in({"a": ["x", "sword", ["sword", "barbarian"]]}, orb) == ["sword", "barbarian"]


def test_board_is_a_word_and_redraws_orion_duel_after_every_move():
    assert parse("orion_duel", "board") == Action("view")
    assert parse("questeros", "board") == Action("view")
    term, lines, g = _terminal("orion_duel")
    term._action("view", "board")
    assert any("B Blue  O Orange" in line for line in lines)
    t = get_title("orion_duel")
    lines.clear()
    drawn = 0
    for _ in range(4):  # each new version of the view draws the board once, a repeat does not
        s = t.to_move(g.game.rules)[0]
        g.submit(t.bots["greedy"](t.view(g.game.rules, s), s, random.Random(0)), s)
        term.env = msgspec.to_builtins(lifecycle.view(t, g.game, term.client.seat))
        term._redraw()
        term._redraw()
        drawn += 1
        assert sum("B Blue  O Orange" in line for line in lines) == drawn


def test_questhall_titles_reads_naturally():
    assert [seat_range(1, 1), seat_range(2, 2), seat_range(2, 6), seat_range(1, 1, "solo")] == \
        ["1 seat", "2 seats", "2-6 seats", "1 seat (solo)"]
    res = CliRunner().invoke(app, ["titles"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "['none']" not in out and "2-2 seats" not in out
    assert "{'" not in out and "None" not in out and "True" not in out  # the options as JSON, not Python reprs
    assert "options alternative_god_rule=false" in out and 'sharing="peaceable"' in out
    assert "Fate Deck, 2-33 seats (GM + 1-32 players), no options" in out
    assert "orion_duel: Orion Duel, 2 seats," in out
    assert "undoable moves: bid;" in out and "no move can be undone" in out
    assert len(titles()) >= 6 and out.count("(hints: ") == len(titles())


def test_play_without_a_gateway_says_so_in_one_line():
    """``questhall play`` against an address nobody answers: one line naming it, exit 2, no traceback
    (it printed httpx's 200-line traceback; found by a newcomer before ``make serve``)."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as s:  # a free port: bound, then closed, so nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = str(Path(sys.executable).with_name("questhall"))
    env = {k: v for k, v in os.environ.items() if k != "QUESTHALL_EXTRA_TITLES"}  # the test-only title: not importable
    p = subprocess.run([exe, "play", "--url", f"http://127.0.0.1:{port}", "--title", "questeros"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 2
    assert p.stderr.strip() == f"No gateway answers at http://127.0.0.1:{port}: start one (make serve) or name it with --url."
    assert "Traceback" not in p.stdout + p.stderr


@pytest.mark.parametrize("command", ["serve", "gateway"])
def test_serve_on_a_taken_port_says_so_in_one_line(command):
    """``questhall serve`` / ``gateway`` on a port another process listens on: one line and exit 2
    before any service starts (uvicorn's bind error came after every worker had started, with a
    60-line traceback; found by a newcomer running a second ``make serve``)."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        exe = str(Path(sys.executable).with_name("questhall"))
        p = subprocess.run([exe, command, "--port", str(port)], capture_output=True, text=True, timeout=120,
                           env={**{k: v for k, v in os.environ.items() if k != "QUESTHALL_EXTRA_TITLES"},
                                "REDIS_URL": "redis://127.0.0.1:1/0"})  # never reached; the test-only title not importable
    assert p.returncode == 2, p.stderr
    assert f"Cannot listen on 127.0.0.1:{port}" in p.stderr and "--port" in p.stderr
    assert "Traceback" not in p.stdout + p.stderr


def test_ok_of_a_command_comes_after_the_feed_lines_of_its_versions():
    """The outcome of a command (its last version) often arrives before the feed lines of its
    events: ``ok (v325)`` waits for ``v325``, so the lines read in version order."""
    term, lines, _ = _terminal("questeros")

    def entry(v):
        return {"version": v, "body": {"type": "seat_forfeited", "seat": 1}}

    term._feed(entry(323))
    term._ack(325)  # the answer came first
    assert lines == ["v323 seat 1 forfeited"]
    term._feed(entry(324))
    term._feed(entry(325))
    term._ack(325 - 2)  # an answer for a version already shown: at once
    term._feed(entry(326))
    assert lines == ["v323 seat 1 forfeited", "v324 seat 1 forfeited", "v325 seat 1 forfeited", "ok (v325)",
                     "ok (v323)", "v326 seat 1 forfeited"]
    term._ack(330)
    term._flush_acks(every=True)  # the game ended before its feed line: said before GAME OVER
    assert lines[-1] == "ok (v330)"


def test_play_with_an_unknown_title_names_the_known_ones_in_one_line():
    """``questhall play --title nope``: one line naming the known titles, exit 2, before any
    gateway is asked (it printed the registry's KeyError in an 80-line traceback; a newcomer's finding)."""
    res = CliRunner().invoke(app, ["play", "--url", "http://127.0.0.1:1", "--title", "nope"])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert out.startswith("Unknown title 'nope'; known: ") and "orion_duel" in out and "questeros" in out
    assert res.exception is None or isinstance(res.exception, SystemExit)


@pytest.mark.parametrize(("given", "said"), [("", "at the end of input"), ("quit\n", "as asked")])
def test_quit_or_the_end_of_input_stops_with_status_1_and_says_so(given, said):
    """``quit`` or the end of input (Ctrl-D, stdin from /dev/null) stops with exit status 1 and one
    line saying so (it stopped in silence; a newcomer's finding)."""
    import anyio

    term, lines, _ = _terminal("orion_duel")

    async def read_line() -> str:
        return given

    term.read_line = read_line
    anyio.run(term._read)
    assert term.code == 1 and term.done.is_set()
    assert lines[-1] == f"Stopped {said} (exit status 1); game g1 goes on without this terminal."
