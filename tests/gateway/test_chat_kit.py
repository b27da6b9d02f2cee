"""The chat grammar of every title: every legal command round-trips through text; errors help."""

from __future__ import annotations

import random

import msgspec
import pytest

from schemas.orion_duel import PlaceTile
from schemas.questeros import Bid, PlayCard
from services.frontends.chat import (
    Action,
    ChatError,
    format_command,
    help_text,
    parse,
    render_event,
    render_view,
)
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.runner import LocalGame

CASES = [("questeros", 3, {}), ("orion_duel", 2, {}), ("orion_duel", 2, {"setup": "manual"}),
         ("quests_over_coffee", 1, {}), ("quests_over_coffee", 2, {"mode": "coop", "companions": True, "environments": True}),
         ("eros_quest", 1, {}), ("fate_deck", 4, {}), ("reventure_orbtale", 3, {}),
         ("orange_quest", 3, {"sharing": "agree"})]


@pytest.mark.parametrize(("title", "seats", "options"), CASES)
def test_every_legal_command_round_trips_and_views_render_short(title, seats, options):
    t = get_title(title)
    g = LocalGame(t, seed=bytes(32))
    g.create_and_start(seats, options)
    rng = random.Random(3)
    names = [f"p{i}" for i in range(seats)]
    checked = 0
    for _ in range(400):
        game = g.game
        if game.status != "active":
            break
        seat = lifecycle.to_move(t, game)[0]
        env = lifecycle.view(t, game, seat)
        env_d = msgspec.to_builtins(env)
        legal = t.legal_commands(game.rules, seat)
        for cmd in rng.sample(legal, min(len(legal), 25)):
            text = format_command(title, cmd)
            assert parse(title, text, env_d, seat) == cmd, text
            checked += 1
        text = render_view(title, env_d, seat)
        assert len(text) < 1500, text
        before = game.version
        g.submit(rng.choice(legal), seat)
        for e in g.events[before:]:
            fe = lifecycle.redact(t, e, seat)
            if fe is not None:
                line = render_event(title, msgspec.to_builtins(fe), names)
                assert line.startswith(f"v{e.version} ") and len(line) < 300
    assert checked > 20


def test_grammar_shortcuts_and_helpful_errors():
    assert parse("questeros", "bid 3") == Bid(quests=3)
    assert parse("questeros", "play 11 blades") == PlayCard(card="b11")
    assert parse("questeros", "play blades 11 pay") == PlayCard(card="b11", pay_xp=True)
    assert parse("questeros", "play epic 5") == PlayCard(card="e5")
    view = {"view": {"remaining": [["single", "triangle_2", "triangle_3"], []]}}
    assert parse("orion_duel", "place triangle at 2,-1 rot 3", view, 0) == PlaceTile(tile="triangle_2", anchor=(2, -1), rotation=3)
    assert parse("questeros", "help") == Action("help")
    for title, text, needle in [("questeros", "bid three", "number"), ("questeros", "play 15 blades", "No card"),
                                ("questeros", "dance", "try bid"), ("orion_duel", "place triangle 2,-1", "place TILE at"),
                                ("orion_duel", "place single at 2;1", "q,r"), ("orion_duel", "place line at 2,1", "no line tile left"), ("quests_over_coffee", "reroll", "reroll 1 3")]:
        with pytest.raises(ChatError, match=needle):
            parse(title, text, view, 0)
    for t in ("questeros", "orion_duel", "quests_over_coffee", "eros_quest", "fate_deck"):
        assert "help" in help_text(t) and len(help_text(t)) < 1500


def test_orbtale_grammar_shortcuts_and_errors():
    from schemas.reventure_orbtale import Attack, Organize, PickHero, Skip
    from schemas.reventure_orbtale import PlayCard as OrbPlay

    assert parse("reventure_orbtale", "pick the mimic") == PickHero(hero="the_mimic")
    assert parse("reventure_orbtale", "hand sword1 orb_life discard map1") == Organize(hand=["sword1", "orb_life"], discard=["map1"])
    assert parse("reventure_orbtale", "attack seat2") == Attack(target=2)
    assert parse("reventure_orbtale", "skip") == Skip()
    assert parse("reventure_orbtale", "play shield3") == OrbPlay(card="shield3")
    for text, needle in [("pick nobody", "No hero"), ("play sword99", "No card"), ("attack", "attack SEAT"), ("dance", "try pick")]:
        with pytest.raises(ChatError, match=needle):
            parse("reventure_orbtale", text)
    assert "help" in help_text("reventure_orbtale") and len(help_text("reventure_orbtale")) < 1500


def test_results_and_lifecycle_lines_name_the_players_and_read_as_english():
    """Newcomer-reported wording: no "seat 1's seat", no "1 victory conditions", no "a Orbs",
    no "1 timeouts"; a result names its players (the stored summary says "Seat N")."""
    from services.frontends.cards import glossary
    from services.frontends.chat.kit import named_summary
    from services.gateway.service import title_detail

    names = ["ann", "seat 1", "cid"]

    def line(body, who=names):
        return render_event("orion_duel", {"version": 9, "body": body}, who)

    botted = {"type": "seat_botted", "seat": 1, "bot": "greedy", "reason": "The seat timed out."}
    assert line(botted) == "v9 seat 1 is played by the greedy bot from now on (the seat timed out)"
    assert line({**botted, "seat": 0}).startswith("v9 ann's seat is played by the greedy bot")
    assert line({**botted, "seat": 2}, []).startswith("v9 seat 2 is played by")
    absent = {"type": "seat_absent", "seat": 0, "timeouts": 1}
    assert "after 1 timeout in a row" in line(absent) and "after 3 timeouts in a row" in line({**absent, "timeouts": 3})
    over = {"type": "game_finished", "result": {"winners": [0], "scores": [1, 0], "summary": "Blue wins 1 victory conditions to 0."}}
    assert line(over) == "v9 game over: Blue wins 1 victory condition to 0."
    assert named_summary("Seat 2 wins with 45 XP.", names) == "cid wins with 45 XP."
    assert named_summary("Seats [0, 2] share the win with 40 XP.", names) == "ann and cid share the win with 40 XP."
    assert named_summary("Seat 7 wins.", names) == "Seat 7 wins."  # a seat without a known name stays as it is
    env = {"game_id": "g1", "version": 30, "status": "finished", "seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}],
           "result": {"winners": [1], "scores": [3.0, 5.0], "summary": "Seat 1 wins with 5 XP."}}
    assert render_view("questeros", env, 0) == "questeros g1 v30 finished: bob wins with 5 XP. (winners: bob)"
    cards = glossary("questeros", title_detail("questeros").content)
    orb = next(v for k, v in cards.items() if k.startswith("o") and "Class card" in v)
    assert "an Orbs Class card" in orb and not any(" a Orbs" in v for v in cards.values())
    assert any("a Blades Class card" in v for v in cards.values())


def test_moves_of_a_seat_whose_secret_choice_is_in_list_only_changes_and_say_so():
    """Orbtale's hero pick: before choosing, ``moves`` lists every hero of the seat; after, every
    other hero (the same again would be refused ``choice_unchanged``) with a note that another
    choice changes it; the seat still to choose reads no note."""
    from services.frontends.chat import moves_text

    t = get_title("reventure_orbtale")
    g = LocalGame(t, seed=bytes(32))
    g.create_and_start(2, {})

    def env(seat: int) -> dict:
        return msgspec.to_builtins(lifecycle.view(t, g.game, seat))

    heroes = lifecycle.view(t, g.game, 0).view.legal
    before = moves_text("reventure_orbtale", env(0), 0)
    assert before.startswith(f"{len(heroes)} moves: ") and "secret choice" not in before
    g.submit(heroes[0], 0)
    after = moves_text("reventure_orbtale", env(0), 0)
    assert after.startswith(f"{len(heroes) - 1} moves: ") and after.endswith("another choice changes it until the reveal)")
    assert format_command("reventure_orbtale", heroes[0]) not in after.split("moves: ", 1)[1].split(" (")[0].split("; ")
    assert "secret choice" not in moves_text("reventure_orbtale", env(1), 1)


def test_the_web_client_names_the_players_in_a_result_as_the_chat_does():
    """clients/web/play/words.js ``namedSummary`` (the page's result line and its feed's game
    over) gives what ``kit.named_summary`` gives (node runs the ES module as the browser would)."""
    import json
    import shutil
    import subprocess
    from pathlib import Path

    from services.frontends.chat.kit import named_summary

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (.ci/run installs nodejs)")
    words = Path(__file__).resolve().parents[2] / "clients" / "web" / "play" / "words.js"
    names = ["Ann", "Bob", None]
    cases = ["Seat 1 wins with 5 XP.", "Seats [0, 2] share the win with 40 XP.", "Blue wins 1 victory conditions to 0.",
             "Seat 7 wins.", "Orange wins 2 victory conditions to 1."]
    script = (f"import {{ eventText, namedSummary }} from {json.dumps(words.as_uri())};\n"
              f"const ctx = {{ seats: {json.dumps([{'name': n} for n in names])} }};\n"
              f"console.log(JSON.stringify([{json.dumps(cases)}.map((s) => namedSummary(s, ctx)),\n"
              "  eventText({ type: 'game_finished', result: { summary: 'Seat 0 wins.' } }, ctx)]));")
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    got, line = json.loads(out.stdout)
    assert got == [named_summary(s, [n or f"seat {i}" for i, n in enumerate(names)]) for s in cases]
    assert line == "Game over: Ann wins."


def test_moves_when_the_game_does_not_wait_for_the_seat_says_so():
    """``moves`` at another seat's turn says ``moves: (not your move)``, as ``hint`` does (it said
    ``0 moves: ``, an empty list after a colon; a newcomer's finding)."""
    from services.frontends.chat import moves_text

    assert moves_text("questeros", None, 0) == "moves: (not your move)"
    assert moves_text("questeros", {"status": "active", "to_move": [1], "view": None}, 0) == "moves: (not your move)"


def test_moves_in_orion_duel_play_lists_the_tile_placements():
    """In Orion Duel's play phase ``moves`` lists the seat's tile placements (its view's ``legal``
    is empty then: it holds the manual setup's moves; the placements are ``placements``). It
    answered ``0 moves: `` while ``hint`` gave a placement (a newcomer's finding)."""
    import random

    import msgspec

    from services.frontends.chat import moves_text
    from services.frontends.chat.kit import legal_moves
    from services.kernel import game as lifecycle
    from services.kernel import get_title
    from services.kernel.runner import LocalGame

    t = get_title("orion_duel")
    g = LocalGame(t, game_id="od", seed=bytes(32))
    g.create_and_start(2)
    rng = random.Random(3)
    bot = next(iter(t.bots.values()))
    while g.game.rules.phase != "play":
        seat = lifecycle.to_move(t, g.game)[0]
        g.submit(bot(t.view(g.game.rules, seat), seat, rng), seat)
    seat = lifecycle.to_move(t, g.game)[0]
    env = msgspec.to_builtins(lifecycle.view(t, g.game, seat))
    assert env["view"]["legal"] == [] and env["view"]["placements"]
    moves = legal_moves("orion_duel", env, seat)
    assert moves == t.legal_commands(g.game.rules, seat) and moves
    assert moves_text("orion_duel", env, seat).startswith(f"{len(moves)} moves: ")
