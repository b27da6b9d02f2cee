"""Event salts: the public head hash cannot confirm a guess of another seat's hidden cards.

A breaker recovered seat 1's secret Orbtale draw in a fraction of a second: seat 0's own command
caused ``cards_drawn`` for seat 1, every other field of the envelopes was known to seat 0 (its
command, the feed's bodies and times, the heads before and after), and the hand is one of a few
thousand card pairs. Every event now carries a salt keyed by the game's secret seed
(``hashing.event_salt``), hashed with the envelope and never in a feed or view.
"""

from __future__ import annotations

import copy
import itertools
import random

import msgspec

from services.audit.verify import audit_bundle
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.hashing import event_hash, event_salt, seal
from services.kernel.runner import LocalGame, stamp
from tests.signed_games import reseal


def _orbtale_until_a_hidden_draw(seed: int = 4) -> tuple[LocalGame, int]:
    """An Orbtale game of 2 seats played by its bots until an event caused by a seat's own
    command hides part of itself from that seat (the other seat's drawn cards at a chapter
    start): (game, index of that event)."""
    t = get_title("reventure_orbtale")
    g = LocalGame(t, game_id="gsalt", seed=bytes([seed]) * 32)
    g.create_and_start(2)
    rng = random.Random(seed)
    bot = t.bots[sorted(t.bots)[0]]
    for _ in range(400):
        before = len(g.events)
        seat = lifecycle.view(t, g.game, None).to_move[0]
        view = lifecycle.view(t, g.game, seat).view
        g.submit(bot(view, seat, rng), seat)
        for i in range(before, len(g.events)):
            env = g.events[i]
            seen = lifecycle.redact(t, env, seat)
            if seen is not None and seen.body != env.body and getattr(env.body, "seat", seat) != seat:
                return g, i
    raise AssertionError("no hidden draw caused by seat 0 in 400 moves")


def test_the_head_hash_confirms_no_guess_of_another_seats_draw_without_the_salt():
    g, i = _orbtale_until_a_hidden_draw()
    env = g.events[i]
    assert len(env.salt) == 32 and env.salt == event_salt(g.seed, g.game.game_id, env.version)
    truth = list(env.body.cards)
    # the seat whose command drew them knows every field but the hidden cards (and the salt): it
    # tries every ordering of a few cards, the true draw among them
    pool = sorted({*truth, "bomb1", "spear2", "tower_shield2", "dagger1", "potion1"})
    guesses = [list(p) for p in itertools.permutations(pool, len(truth))]
    assert truth in guesses

    def hash_of(cards: list[str], salt: str) -> str:
        body = msgspec.structs.replace(env.body, cards=cards)
        return event_hash(msgspec.structs.replace(env, body=body, salt=salt, hash=""))

    assert [c for c in guesses if hash_of(c, "") == env.hash] == []  # without the salt: no guess confirmed
    assert [c for c in guesses if hash_of(c, env.salt) == env.hash] == [truth]  # the attack, had the salt been known


def test_no_feed_entry_or_view_carries_a_salt():
    g, _ = _orbtale_until_a_hidden_draw()
    t = get_title("reventure_orbtale")
    salts = {e.salt for e in g.events}
    assert "" not in salts
    for seat in (0, 1, None):
        shown = b"".join(msgspec.json.encode(entry) for e in g.events if (entry := lifecycle.redact(t, e, seat)))
        shown += msgspec.json.encode(lifecycle.view(t, g.game, seat))
        assert not any(s.encode() in shown for s in salts), seat


def _finished_duel(seed: int) -> dict:
    """The bundle of an Orion Duel game its bots played to the end in memory (seed ``seed``)."""
    from services.audit.verify import build_bundle

    t = get_title("orion_duel")
    g = LocalGame(t, game_id=f"gduel{seed}", seed=bytes([seed]) * 32)
    g.create_and_start(2)
    rng = random.Random(seed)
    bot = t.bots[sorted(t.bots)[0]]
    while g.game.status == "active":
        seat = lifecycle.view(t, g.game, None).to_move[0]
        g.submit(bot(lifecycle.view(t, g.game, seat).view, seat, rng), seat)
    return build_bundle(g.game.game_id, [msgspec.to_builtins(e) for e in g.events],
                        [(vb, va, msgspec.to_builtins(c)) for vb, va, c in g.commands])


def _edited(bundle: dict, edit) -> dict:
    """A copy of ``bundle`` with ``edit(events)`` applied and every hash recomputed (re-chained:
    every link holds, so only the rules or the seed can tell)."""
    b = copy.deepcopy(bundle)
    edit(b["events"])
    return reseal(b)


def _unsalted(events: list) -> None:
    for e in events:
        e.pop("salt", None)


def test_a_salted_game_audits_valid_and_a_wrong_salt_is_found():
    """Re-chained after one salt was changed, the bundle is invalid at that event; a game of
    events recorded before salts (none) still audits valid."""
    bundle = _finished_duel(9)
    assert audit_bundle(bundle).status == "valid"
    verdict = audit_bundle(_edited(bundle, lambda ev: ev[5].update(salt="0" * 32)))
    assert verdict.status == "invalid" and verdict.first_bad_version == 6, verdict.summary()
    assert audit_bundle(_edited(bundle, _unsalted)).status == "valid"


def test_an_unsalted_envelope_keeps_the_hash_it_had_before_salts():
    """An event with no salt hashes exactly as before the field existed (no "salt" key)."""
    import hashlib

    t = get_title("orion_duel")
    game = lifecycle.new_game("gold", t.name)
    env = stamp(game, [], "c1", 1)  # nothing
    assert env == []
    from schemas.envelope import CreateGame, EventEnvelope

    g = LocalGame(t, game_id="gold", seed=bytes([1]) * 32)
    g.submit(CreateGame(seats=2))
    e = msgspec.structs.replace(g.events[0], salt="", hash="")
    data = {k: v for k, v in msgspec.to_builtins(e).items() if k not in ("hash", "salt")}
    assert seal(e).hash == hashlib.sha256(msgspec.json.encode(data, order="sorted")).hexdigest()
    assert isinstance(g.events[0], EventEnvelope) and g.events[0].salt


def test_the_archive_record_derives_the_salts_from_the_revealed_seed():
    """``questhall-archive/3`` leaves every salt out (it follows from the revealed seed): the
    record unpacks to the bundle byte for byte and is no larger than the same game's without
    salts; a salt that does not follow from the seed is kept as stored."""
    from services.audit import compact

    bundle = _finished_duel(5)
    record = compact.pack(bundle)
    same = msgspec.json.encode  # byte for byte (builtins here hold tuples where a record has lists)
    assert record.startswith(compact.MAGIC3) and same(compact.unpack(record)) == same(bundle)
    assert len(record) <= len(compact.pack(_edited(bundle, _unsalted))) + 8
    odd = _edited(bundle, lambda ev: ev[3].update(salt="f" * 32))
    assert same(compact.unpack(compact.pack(odd))) == same(odd)


def test_a_stripped_salt_in_a_salted_game_is_a_divergence():
    """An event of a salted game re-chained without its salt (as if recorded before salts) is
    invalid at that event, not taken for an older record."""
    bundle = _finished_duel(6)
    for strip in (lambda ev: ev[7].update(salt=""), lambda ev: ev[7].pop("salt")):
        verdict = audit_bundle(_edited(bundle, strip))
        assert verdict.status == "invalid" and verdict.first_bad_version == 8, verdict.summary()


def test_stripping_the_first_salt_does_not_turn_the_salt_checks_off():
    """Event 1 stripped of its salt and a later one given a wrong salt, all re-chained: still
    invalid (one salted event makes a salted game; a second breaker's finding)."""
    def edit(ev: list) -> None:
        del ev[0]["salt"]
        ev[3]["salt"] = "0" * 32

    assert audit_bundle(_edited(_finished_duel(8), edit)).status == "invalid"
