"""Clocks, timeouts, absent seats and bot seats in the lifecycle (pure, no Redis; issue 14).

Time rides in the command (``received_at``, here ``LocalGame.now_ms``); the clock service's
part is played by :func:`fire_due`, which sends what it would send.
"""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from schemas.envelope import (
    AbandonGame,
    Accepted,
    CommandEnvelope,
    JoinSeat,
    Rejected,
    StartGame,
    Timeout,
)
from services.audit.verify import audit_bundle, bundle_of
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.hashing import canonical_builtins, command_hash
from services.kernel.runner import LocalGame

T0 = 1_767_225_600_000
SEATS = {"questeros": 3, "orion_duel": 2, "quests_over_coffee": 1}


def new(title: str, options: dict, seats: int | None = None, seed: int = 5) -> LocalGame:
    g = LocalGame(get_title(title), game_id=f"clock-{title}", seed=bytes([seed]) * 32)
    g.now_ms = T0
    g.create_and_start(seats or SEATS[title], options)
    return g


def fire_due(g: LocalGame) -> list:
    """What the clock service does at ``g.now_ms``: a timeout for every deadline due."""
    outs = []
    for d in lifecycle.view(g.title, g.game, None).deadlines:
        if d.at <= g.now_ms:
            outs.append(g.submit(Timeout(seat=d.seat, version=d.set_at), None, command_id=f"timeout:{d.seat}:{d.set_at}"))
    return outs


def tags(g: LocalGame, since: int = 0) -> list[str]:
    return [e.body.__struct_config__.tag for e in g.events[since:]]


@pytest.mark.parametrize("title", sorted(SEATS))
def test_a_game_played_to_the_end_by_timeouts_alone_audits_valid(title):
    # Every decision times out: the title's default move plays the whole game. After
    # absent_after timeouts a seat is absent and its deadlines fall due at once.
    g = new(title, {"clock": "move", "move_seconds": 10, "absent_after": 2})
    for _ in range(5000):
        if g.game.status != "active":
            break
        due = [d.at for d in g.game.clock.deadlines]
        g.now_ms = max(g.now_ms, min(due))
        outs = fire_due(g)
        assert outs and all(isinstance(o, Accepted) and o.events for o in outs), outs
    assert g.game.status == "finished"
    assert "seat_absent" in tags(g)
    verdict = audit_bundle(bundle_of(g.game.game_id, g.events, g.commands))
    assert verdict.status == "valid", verdict.reason


def test_every_timeout_is_an_event_saying_why_and_absent_seats_fall_due_at_once():
    g = new("orion_duel", {"clock": "move", "move_seconds": 30, "absent_after": 2, "setup": "symmetric_1", "first_seat": 0})
    first = g.game.clock.deadline_of(0)
    assert first.at == T0 + 30_000 and first.since == T0
    g.now_ms = first.at
    n = len(g.events)
    [out] = fire_due(g)
    assert tags(g, n) == ["timed_out", "orion_duel.tile_placed", "clock_updated"]
    why = g.events[n].body
    assert (why.seat, why.deadline, why.action) == (0, first.at, "default_move") and "30 s" in why.reason
    # seat 1 moves in time; seat 0 times out again: the second in a row marks it absent
    g.now_ms += 1000
    legal = g.title.legal_commands(g.game.rules, 1)
    assert isinstance(g.submit(legal[0], 1), Accepted)
    g.now_ms = g.game.clock.deadline_of(0).at
    n = len(g.events)
    fire_due(g)
    assert tags(g, n)[:2] == ["timed_out", "seat_absent"]
    assert g.game.clock.absent == (0,)
    # seat 1 moves; seat 0, absent, has a deadline at the moment it starts waiting
    g.now_ms += 500
    assert isinstance(g.submit(g.title.legal_commands(g.game.rules, 1)[0], 1), Accepted)
    d = g.game.clock.deadline_of(0)
    assert d.at == d.since == g.now_ms
    # seat 0 moves itself (at the deadline instant, so in time): no longer absent
    assert isinstance(g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0), Accepted)
    assert g.game.clock.absent == () and g.game.clock.timeouts[0] == 0


def test_forfeit_on_timeout_ends_the_game_for_the_other_seat():
    g = new("questeros", {"clock": "move", "move_seconds": 5, "on_timeout": "forfeit"}, seats=2)
    seat = g.game.clock.deadlines[0].seat
    g.now_ms += 5_000
    fire_due(g)
    assert g.game.status == "finished"
    assert g.game.result.winners == [1 - seat] and f"Seat {seat} forfeits" in g.game.result.summary
    assert tags(g)[-3:] == ["timed_out", "game_finished", "seed_revealed"]
    assert audit_bundle(bundle_of(g.game.game_id, g.events, g.commands)).status == "valid"


def test_a_forfeit_in_a_cooperative_title_loses_for_the_whole_party():
    g = new("quests_over_coffee", {"clock": "move", "on_timeout": "forfeit"})
    g.now_ms += 60_000
    fire_due(g)
    assert g.game.status == "finished" and g.game.result.winners == []


def test_on_timeout_bot_hands_the_seat_to_a_bot_shown_in_the_views():
    g = new("orion_duel", {"clock": "move", "on_timeout": "bot", "timeout_bot": "greedy"})
    seat = g.game.clock.deadlines[0].seat
    g.now_ms += 60_000
    n = len(g.events)
    fire_due(g)
    assert tags(g, n)[:2] == ["timed_out", "seat_botted"]
    assert g.events[n + 1].body.takeover is True  # a takeover, unlike a seat joined as a bot
    # a record from before the field (takeover left out, the chain re-sealed) still audits valid
    from tests.signed_games import reseal

    g.submit(AbandonGame(), 1 - seat)
    old = bundle_of(g.game.game_id, g.events, g.commands)
    assert audit_bundle(old).status == "valid"
    del old["events"][n + 1]["body"]["takeover"]
    assert audit_bundle(reseal(old)).status == "valid", audit_bundle(reseal(old)).summary()
    v = lifecycle.view(g.title, g.game, None)
    assert v.bots[seat] == "greedy" and v.bots[1 - seat] is None


BOT_ABSENT = {"clock": "move", "move_seconds": 30, "on_timeout": "bot", "absent_after": 1, "setup": "symmetric_1",
              "first_seat": 0}


def _take_over_seat_0(g: LocalGame) -> int:
    """Seat 0 lets its first deadline pass: the timeout hands it to the bot. Returns the event index."""
    assert g.game.clock.deadline_of(0) is not None
    g.now_ms = g.game.clock.deadline_of(0).at + 1
    n = len(g.events)
    assert all(isinstance(o, Accepted) for o in fire_due(g))
    return n


def test_a_seat_a_bot_takes_over_is_not_marked_absent_so_its_deadlines_wait_for_the_bot():
    """on_timeout = bot with absent_after = 1: the timeout hands the seat to the bot and plays its
    move, and does not also mark it absent (its next deadline fell due at once, racing the bot
    service about to play it; docs/gateway.md "Clocks"). Its later timeouts (the bot service down)
    do not mark it absent either: each waits the full move time."""
    g = new("orion_duel", BOT_ABSENT)
    n = _take_over_seat_0(g)
    assert tags(g, n)[:2] == ["timed_out", "seat_botted"] and "seat_absent" not in tags(g, n)
    assert g.game.clock.absent == () and g.game.bots[0] == "random"
    g.now_ms += 1_000
    assert isinstance(g.submit(g.title.legal_commands(g.game.rules, 1)[0], 1), Accepted)
    d = g.game.clock.deadline_of(0)
    assert d is not None and d.at == g.now_ms + 30_000  # the bot's decision has the move time
    g.now_ms = d.at + 1
    m = len(g.events)
    fire_due(g)  # the bot service did not play in time: its default move, still not absent
    assert tags(g, m)[0] == "timed_out" and "seat_absent" not in tags(g, m) and g.game.clock.absent == ()
    assert g.game.lifecycle_version == lifecycle.LIFECYCLE_VERSION == 1  # the rule a new game runs under, in its log


def test_an_old_game_that_marked_a_taken_over_seat_absent_replays_and_audits_as_it_was_played(monkeypatch):
    """Event sourcing: a stored game's meaning never changes. A game created before
    ``lifecycle_version`` (its game_created lacks the field: 0) keeps the old rule: the takeover
    also marked the seat absent, its next deadline at once. Folded and audited by this code it is
    the game that was played, and it goes on under its own rule."""
    monkeypatch.setattr(lifecycle, "LIFECYCLE_VERSION", 0)
    g = new("orion_duel", BOT_ABSENT)
    monkeypatch.undo()
    assert g.game.lifecycle_version == 0
    n = _take_over_seat_0(g)
    assert tags(g, n)[:3] == ["timed_out", "seat_absent", "seat_botted"] and g.game.clock.absent == (0,)
    g.now_ms += 1_000
    assert isinstance(g.submit(g.title.legal_commands(g.game.rules, 1)[0], 1), Accepted)
    assert g.game.clock.deadline_of(0).at == g.now_ms  # absent: falls due at once (the old rule)
    from tests.signed_games import reseal

    g.submit(AbandonGame(), 1)  # the seed revealed: every command re-decided
    old = bundle_of(g.game.game_id, g.events, g.commands)
    del old["events"][0]["body"]["lifecycle_version"]  # the record as stored before the field
    old = reseal(old)
    assert audit_bundle(old).status == "valid", audit_bundle(old).summary()
    from services.kernel import codec

    typed = [codec(g.title.name).decode_event(msgspec.json.encode(e), json=True) for e in old["events"]]
    assert "lifecycle_version" not in old["events"][0]["body"] and typed[0].body.lifecycle_version == 0
    replayed = lifecycle.fold(g.title, typed)
    assert replayed.lifecycle_version == 0 and replayed.clock == g.game.clock and replayed.rules == g.game.rules
    assert replayed.clock.absent == (0,) and replayed.status == "finished"


def test_a_seat_joined_as_a_bot_is_no_takeover():
    from schemas.envelope import CreateGame, SeatBotted

    g = LocalGame(get_title("orion_duel"), seed=b"\1" * 32)
    g.submit(CreateGame(seats=2))
    g.submit(JoinSeat(name="", bot="greedy"), 1)
    botted = [e.body for e in g.events if isinstance(e.body, SeatBotted)]
    assert len(botted) == 1 and botted[0].takeover is False


def test_a_stale_timeout_is_a_no_op():
    g = new("orion_duel", {"clock": "move", "setup": "symmetric_1", "first_seat": 0})
    d = g.game.clock.deadline_of(0)
    g.now_ms = d.at  # the move at the deadline's very instant is in time
    assert isinstance(g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0), Accepted)
    before = g.game
    out = g.submit(Timeout(seat=0, version=d.set_at), None, command_id=f"timeout:0:{d.set_at}")
    assert isinstance(out, Accepted) and out.events == 0 and g.game == before
    # a timeout for a version that never had a deadline, or from a seat, changes nothing either
    assert g.submit(Timeout(seat=1, version=3), None).events == 0
    out = g.submit(Timeout(seat=1, version=g.game.clock.deadline_of(1).set_at), 0)
    assert isinstance(out, Rejected) and out.code == "system_command"


def test_a_move_after_its_deadline_is_refused():
    g = new("orion_duel", {"clock": "move", "move_seconds": 30, "setup": "symmetric_1", "first_seat": 0})
    g.now_ms = g.game.clock.deadline_of(0).at + 1
    out = g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0)
    assert isinstance(out, Rejected) and out.code == "out_of_time"


def test_clock_options_are_checked_and_the_correspondence_preset_is_24_hours():
    g = new("orion_duel", {"clock": "correspondence"})
    assert g.game.options["clock"] == "move" and g.game.options["move_seconds"] == 86_400
    assert g.game.clock.deadlines[0].at == T0 + 86_400_000
    for bad, code in [({"clock": "move", "move_seconds": 0}, "bad_options"), ({"clock": "sundial"}, "bad_options"),
                      ({"increment_seconds": -1}, "bad_options"), ({"absent_after": 101}, "bad_options"),
                      ({"on_timeout": "bot", "timeout_bot": "nobody"}, "unknown_bot")]:
        lg = LocalGame(get_title("orion_duel"))
        from schemas.envelope import CreateGame

        out = lg.submit(CreateGame(seats=2, options=bad))
        assert isinstance(out, Rejected) and out.code == code, (bad, out)


def test_a_game_without_clock_options_stores_none_of_them():
    g = new("orion_duel", {})
    assert "clock" not in g.game.options and g.game.clock is None
    assert lifecycle.view(g.title, g.game, None).deadlines == []


def test_a_seat_joined_as_a_bot():
    lg = LocalGame(get_title("orion_duel"))
    from schemas.envelope import CreateGame

    lg.submit(CreateGame(seats=2))
    assert lg.submit(JoinSeat(bot="nobody"), 0).code == "unknown_bot"
    assert isinstance(lg.submit(JoinSeat(bot="greedy"), 0), Accepted)
    assert isinstance(lg.submit(JoinSeat(name="Ann"), 1), Accepted)
    assert isinstance(lg.submit(StartGame(), 1), Accepted)
    v = lifecycle.view(lg.title, lg.game, None)
    assert v.seats[0].name == "greedy bot" and v.bots == ["greedy", None]


def test_fields_added_later_keep_the_hash_of_commands_recorded_before_them():
    env = CommandEnvelope(command_id="c1", game_id="g", title="orion_duel", seat=0, body=JoinSeat(name="Ann"))
    old = msgspec.to_builtins(env)
    del old["received_at"]
    del old["body"]["bot"]
    assert command_hash(env) == hashlib.sha256(canonical_builtins(old)).hexdigest()
    assert command_hash(msgspec.structs.replace(env, received_at=5)) != command_hash(env)


def test_every_seat_a_simultaneous_choice_waits_for_has_a_deadline_and_a_default_choice_stays_secret():
    from tests.toyvote import TOY_VOTE, Pick

    g = LocalGame(TOY_VOTE, game_id="vote", seed=bytes(32))
    g.now_ms = T0
    g.create_and_start(3, {"rounds": 1, "clock": "move", "move_seconds": 10})
    assert [(d.seat, d.at) for d in g.game.clock.deadlines] == [(0, T0 + 10_000), (1, T0 + 10_000), (2, T0 + 10_000)]
    g.now_ms += 3_000
    assert isinstance(g.submit(Pick(word="ccc"), 0), Accepted)
    assert [(d.seat, d.at) for d in g.game.clock.deadlines] == [(1, T0 + 10_000), (2, T0 + 10_000)]
    g.now_ms = T0 + 10_000
    n = len(g.events)
    d1 = g.game.clock.deadline_of(1)
    g.submit(Timeout(seat=1, version=d1.set_at), None)
    assert tags(g, n) == ["timed_out", "toy_vote.picked", "clock_updated"]
    fe = lifecycle.redact(g.title, g.events[n + 1], 2)
    assert fe is not None and getattr(fe.body, "choice", None) is None  # seat 2 sees only that seat 1 chose
    fire_due(g)  # seat 2's deadline (set at the same version, still pending) fires too: the reveal
    assert g.game.status == "finished"


@pytest.mark.parametrize("options", [
    {"clock": "move", "move_seconds": 10, "absent_after": 1},  # absent: its deadlines fall due at once
    {"clock": "bank", "bank_seconds": 10, "increment_seconds": 0},  # an empty bank with no increment
])
def test_a_timeout_with_no_move_to_play_does_not_fire_again_and_again(options):
    # The Fate Deck has no default move (F7): a timeout records itself and plays nothing. The GM
    # must then get no deadline that is already due, or the clock service would time it out in
    # a loop, appending events without end while nobody acts (found by the breaker session).
    g = new("fate_deck", options, seats=3)
    g.now_ms = g.game.clock.deadline_of(0).at
    n = len(g.events)
    for _ in range(20):  # the clock service polling at the same instant
        fire_due(g)
    assert tags(g, n).count("timed_out") == 1
    assert g.game.clock.deadline_of(0) is None
    # once the GM acts itself it is no longer absent and has a deadline again
    g.now_ms += 1_000
    g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0)  # the GM itself acts: it is back
    assert g.game.clock.deadline_of(0) is not None and 0 not in g.game.clock.absent


def test_a_refusal_does_not_echo_a_huge_bot_name():
    # An error is one sentence: a 10 000-character timeout_bot came back whole in the message.
    from schemas.envelope import CreateGame

    g = LocalGame(get_title("questeros"), game_id="clock-bot-name")
    out = g.submit(CreateGame(seats=2, options={"on_timeout": "bot", "timeout_bot": "x" * 10_000}))
    assert isinstance(out, Rejected) and out.code == "unknown_bot" and len(out.message) < 200


def test_a_title_timed_decision_keeps_its_deadline_by_key_and_charges_no_bank():
    """Title.decision_seconds (Orange Quest's windows and agreement timer): a deadline with the
    title's key whatever the clock option, kept while the key stays, never charged to a bank."""
    from schemas.envelope import LifecycleOptions
    from services.kernel import clock

    for kind in ("none", "bank"):
        opts = LifecycleOptions(clock=kind, bank_seconds=100)
        c = clock.start(opts, 3)
        c = clock.advance(opts, c, [1, 2], 0, T0, 5, timed={1: ("agree:1", 30), 2: ("agree:1", 30)})
        assert [(d.seat, d.at, d.key) for d in c.deadlines] == [(1, T0 + 30_000, "agree:1"), (2, T0 + 30_000, "agree:1")]
        # seat 1 acts 20 s later and is still waited for under the same key: its deadline stays
        c2 = clock.advance(opts, c, [1, 2], 1, T0 + 20_000, 6, timed={1: ("agree:1", 30), 2: ("agree:1", 30)})
        assert c2.deadlines == c.deadlines and c2.banks == c.banks and c2.timeouts == c.timeouts
        # a new key (a Block extends a window) sets a new deadline; leaving the decision drops it
        c3 = clock.advance(opts, c2, [2], 1, T0 + 21_000, 7, timed={2: ("window:1:2", 20)})
        assert [(d.seat, d.at, d.key) for d in c3.deadlines] == [(2, T0 + 41_000, "window:1:2")]
        assert c3.banks == c.banks
        if kind == "none":
            assert clock.advance(opts, c3, [0], 2, T0 + 22_000, 8).deadlines == ()
