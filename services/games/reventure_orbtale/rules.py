"""Orbtale rules: setup, decide, the secret choices, legal commands, status.

Source: rulebooks/reventure-orbtale.txt ("Preparation", "Game sequence", "Combat rules", "FAQ",
the 2021 rules update) and RULINGS.md "Reventure: Orbtale"; rulings taken here are listed on
docs/games/reventure_orbtale.md.

Setup draws, in order: ``shuffle`` of the 34 non-orb cards (treasures.toml order), ``shuffle``
of its top half (17) with the 4 orbs (then on top of the rest), ``shuffle`` of the 12 heroes
(seat ``i`` gets ``[3i, 3i+3)``), ``randbelow(seats)`` (the turn token), ``shuffle`` of each
chapter deck. Inventories: 3 cards each from the deck top, in turn order from the token holder.
"""

from __future__ import annotations

import itertools

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.reventure_orbtale import (
    Attack,
    AttackDeclared,
    AttackSkipped,
    CombatEnded,
    GameSetUp,
    HeroReincarnated,
    Organize,
    PickHero,
    PlayCard,
    RoundResolved,
    Skip,
)
from services.games.reventure_orbtale.content import CARDS, HERO_ORDER, PACK, WHAT_TEXT, WHO_TEXT
from services.games.reventure_orbtale.effects import EFFECTS
from services.games.reventure_orbtale.flow import Flow, GameOver
from services.games.reventure_orbtale.state import (
    MAX_HEALTH,
    ORBS,
    OState,
    Player,
    current_turn,
    hand_limit,
    in_play,
    orbs_owned,
    playing,
    skills,
    tie_inventory,
    turn_order,
    unused,
)
from services.kernel import Rejection
from services.kernel.secret import SecretChoice

BEATS = {("attack", "strategy"), ("defense", "attack"), ("strategy", "defense")}
"""Sword beats map, shield beats sword, map beats shield; an orb beats every other type."""
ORGANIZE_SAMPLE = 40
"""How many Organize commands ``legal_commands`` lists at most (any valid hand is accepted)."""


def initial_state(seats: int, chapter_limit: int) -> OState:
    """The state before setup."""
    return OState(seats=seats, chapter_limit=chapter_limit, players=tuple(Player() for _ in range(seats)))


def setup(seats: int, chance) -> list[Event]:
    """Treasure deck (orbs in the top half), heroes, token, inventories, chapter decks."""
    rest = chance.shuffle([c for c in PACK if CARDS[c].kind != "orb"])
    half = len(rest) // 2
    deck = chance.shuffle(rest[:half] + list(ORBS)) + rest[half:]
    heroes = chance.shuffle(list(HERO_ORDER))
    token = chance.randbelow(seats)
    inventories: list[list[str]] = [[] for _ in range(seats)]
    for i in range(seats):
        seat = (token + i) % seats
        inventories[seat] = deck[3 * i:3 * i + 3]
    deck = deck[3 * seats:]
    chapters = [chance.shuffle(list(WHO_TEXT)), chance.shuffle(list(WHAT_TEXT))]
    return [GameSetUp(token=token, deck=deck, deck_count=len(deck), inventories=inventories,
                      heroes=[heroes[3 * i:3 * i + 3] for i in range(seats)], chapter_decks=chapters)]


def _run(state: OState, chance, step) -> list[Event]:
    flow = Flow(state, chance)
    try:
        step(flow)
    except GameOver:
        pass
    return flow.events


def _after_turn(flow: Flow) -> None:
    if flow.s.phase == "combat" and current_turn(flow.s) is None:
        flow.end_chapter()


def decide(s: OState, seat: int, cmd: Command, chance) -> list[Event]:
    """Attack or skip (the only commands that are not secret choices).

    Raises Rejection ``game_over``, ``not_combat_phase``, ``not_your_turn``, ``bad_target``,
    ``empty_hand``, ``unknown_command``.
    """
    if s.phase == "over":
        raise Rejection("game_over", "The game is over.")
    if not isinstance(cmd, Attack | Skip):
        raise Rejection("unknown_command", "Orbtale knows pick_hero, organize, attack, skip and play_card.")
    if s.phase != "combat":
        raise Rejection("not_combat_phase", "Attacks are declared or skipped only in the combat phase.")
    turn = current_turn(s)
    if seat != turn:
        raise Rejection("not_your_turn", f"It is seat {turn}'s turn to attack or skip.")
    if isinstance(cmd, Skip):
        def skip(flow: Flow) -> None:
            flow.emit(AttackSkipped(seat=seat))
            _after_turn(flow)
        return _run(s, chance, skip)
    if cmd.target == seat or not 0 <= cmd.target < s.seats or not in_play(s, cmd.target):
        raise Rejection("bad_target", "Attack another player whose hero is in play.")
    if not s.players[seat].hand:
        raise Rejection("empty_hand", "You have no card in hand to attack with: skip instead.")
    return [AttackDeclared(attacker=seat, defender=cmd.target)]


# ---------------------------------------------------------------------------------------------
# Secret choices (services/kernel/secret.py)


def secret_choice(s: OState) -> SecretChoice | None:
    """The hero pick, the organization, a combat round's face-down cards or a reincarnation."""
    if s.phase == "hero_pick":
        return SecretChoice(key="hero", seats=tuple(range(s.seats)))
    if s.phase == "organization":
        return SecretChoice(key=f"organize:{s.chapter}", seats=tuple(sorted(playing(s))))
    if s.phase == "duel" and s.duel is not None:
        d = s.duel
        seats = (d.attacker, d.defender) if unused(s, d.defender) else (d.attacker,)
        return SecretChoice(key=f"duel:{s.chapter}:{d.attacker}:{d.round}", seats=tuple(sorted(seats)))
    if s.phase == "reincarnation":
        return SecretChoice(key=f"reincarnate:{s.chapter}", seats=s.reincarnating)
    return None


def check_choice(s: OState, seat: int, cmd: Command) -> None:
    """Raise Rejection unless ``seat`` may choose ``cmd`` now (judged on its own cards only).

    Codes: ``wrong_choice``, ``hero_not_offered``, ``not_in_reserve``, ``not_in_inventory``,
    ``duplicate_card``, ``too_many_cards``, ``card_not_in_hand``, ``card_already_played``.
    """
    p = s.players[seat]
    want = {"hero_pick": PickHero, "reincarnation": PickHero, "organization": Organize, "duel": PlayCard}[s.phase]
    if not isinstance(cmd, want):
        raise Rejection("wrong_choice", f"The open choice takes {want.__struct_config__.tag}.")
    if isinstance(cmd, PickHero):
        pool = p.dealt if s.phase == "hero_pick" else p.reserve
        if cmd.hero not in pool:
            code = "hero_not_offered" if s.phase == "hero_pick" else "not_in_reserve"
            raise Rejection(code, f"Pick one of your heroes: {', '.join(pool)}.")
    elif isinstance(cmd, Organize):
        cards = [*cmd.hand, *cmd.discard]
        if len(set(cards)) != len(cards):
            raise Rejection("duplicate_card", "Name each card once, in the hand or the discard.")
        missing = [c for c in cards if c not in p.inventory]
        if missing:
            raise Rejection("not_in_inventory", f"Not in your inventory: {', '.join(missing[:5])}.")
        limit = hand_limit(s, seat)
        if len(cmd.hand) > limit:
            raise Rejection("too_many_cards", f"Your hand takes at most {limit} cards.")
    elif isinstance(cmd, PlayCard):
        if cmd.card not in p.hand:
            raise Rejection("card_not_in_hand", f"{cmd.card!r} is not in your hand.")
        if cmd.card not in unused(s, seat):
            raise Rejection("card_already_played", f"{cmd.card!r} was already played in this combat.")


def resolve_choices(s: OState, choices: dict[int, Command], chance) -> list[Event]:
    """What follows a reveal: chapter 1, the discards and combat, a combat round, or the
    reincarnations and the next chapter."""
    first = next(iter(choices.values()))

    def step(flow: Flow) -> None:
        if isinstance(first, PickHero) and s.phase == "hero_pick":
            flow.start_chapter()
        elif isinstance(first, PickHero):
            for seat in sorted(choices):
                flow.emit(HeroReincarnated(seat=seat, hero=choices[seat].hero, health=MAX_HEALTH))  # type: ignore[attr-defined]
            flow.next_chapter()
        elif isinstance(first, Organize):
            for seat in turn_order(s):
                if seat in choices:
                    flow.discard(seat, list(choices[seat].discard), "inventory", "organization")  # type: ignore[attr-defined]
            _after_turn(flow)
        else:
            resolve_round(flow)
    return _run(s, chance, step)


def resolve_round(flow: Flow) -> None:
    """One combat round after both face-down cards are revealed (rulebook "Combat rules")."""
    s = flow.s
    d = s.duel
    assert d is not None
    a, b = d.attacker, d.defender
    ca, cb = d.last
    winner: int | None
    if cb is None or ca is None:
        winner, why = (a if cb is None else b), "undefended"
    else:
        ka, kb = CARDS[ca].kind, CARDS[cb].kind
        if ka != kb:
            a_wins = ka == "orb" or (kb != "orb" and (ka, kb) in BEATS)
            winner, why = (a if a_wins else b), "type"
        else:
            da, db = "en_garde" in skills(s, a), "en_garde" in skills(s, b)
            ia, ib = tie_inventory(s, a), tie_inventory(s, b)
            if da != db:
                winner, why = (a if da else b), "en_garde"
            elif ia != ib:
                winner, why = (a if ia < ib else b), "inventory"
            elif unused(s, a) and unused(s, b):
                flow.emit(RoundResolved(attacker=a, defender=b, round=d.round, winner=None, why="new_round"))
                return
            else:
                flow.emit(RoundResolved(attacker=a, defender=b, round=d.round, winner=None, why="no_winner"))
                flow.emit(CombatEnded(attacker=a, defender=b, winner=None, used=None, used_to=""))
                _after_turn(flow)
                return
    loser = b if winner == a else a
    flow.emit(RoundResolved(attacker=a, defender=b, round=d.round, winner=winner, why=why))
    card = CARDS[ca if winner == a else cb]  # type: ignore[index]
    EFFECTS[card.effect](flow, card, winner, loser)
    to = {"attack": "hand", "defense": "inventory", "orb": "active",
          "strategy": "hand" if "keep_maps" in skills(flow.s, winner) else "discard"}[card.kind]
    flow.emit(CombatEnded(attacker=a, defender=b, winner=winner, used=card.id, used_to=to))
    dead = [x for x in (a, b) if in_play(flow.s, x) and flow.s.players[x].health <= 0]
    flow.eliminate(dead, winner)
    _after_turn(flow)


# ---------------------------------------------------------------------------------------------
# Queries


def _organize_sample(s: OState, seat: int) -> list[Command]:
    inv = sorted(s.players[seat].inventory, key=PACK.index)
    k = min(hand_limit(s, seat), len(inv))
    out: list[Command] = []
    seen: set[tuple] = set()
    for size in range(k, -1, -1):
        for combo in itertools.combinations(inv, size):
            sig = tuple(CARDS[c].base for c in combo)
            if sig in seen:
                continue
            seen.add(sig)
            rest = [c for c in inv if c not in combo]
            out.append(Organize(hand=list(combo)))
            if rest and len(out) < ORGANIZE_SAMPLE:
                out.append(Organize(hand=list(combo), discard=[c for c in rest if CARDS[c].kind != "orb"] or rest))
            if len(out) >= ORGANIZE_SAMPLE:
                return out
    return out


def legal_commands(s: OState, seat: int) -> list[Command]:
    """Commands ``seat`` may send now (organization: a bounded sample of ORGANIZE_SAMPLE)."""
    p = s.players[seat]
    if s.phase == "hero_pick":
        return [PickHero(hero=h) for h in p.dealt]
    if s.phase == "reincarnation" and seat in s.reincarnating:
        return [PickHero(hero=h) for h in p.reserve]
    if s.phase == "organization" and in_play(s, seat):
        return _organize_sample(s, seat)
    if s.phase == "combat" and current_turn(s) == seat:
        out: list[Command] = [Skip()]
        if p.hand:
            out += [Attack(target=t) for t in playing(s) if t != seat]
        return out
    if s.phase == "duel":
        req = secret_choice(s)
        if req is not None and seat in req.seats:
            return [PlayCard(card=c) for c in unused(s, seat)]
    return []


def to_move(s: OState) -> list[int]:
    """Seats the game waits for (the kernel drops those that already made a secret choice)."""
    if s.phase == "combat":
        t = current_turn(s)
        return [] if t is None else [t]
    req = secret_choice(s)
    return list(req.seats) if req is not None else []


def status(s: OState) -> Result | None:
    """The result once someone owns all 4 orbs, every other hero is eliminated, nobody is left,
    or the house chapter limit is reached."""
    if s.phase != "over":
        return None
    why = {"four_orbs": "owns all 4 orbs", "last_hero": "is the last hero standing",
           "chapter_limit": f"leads after the chapter limit ({s.chapter_limit})"}.get(s.win_reason, "")
    if not s.winners:
        summary = "No hero is left: nobody wins."
    elif len(s.winners) == 1:
        summary = f"Seat {s.winners[0]} {why}."
    else:
        summary = f"Seats {list(s.winners)} share the win: they {why.replace('leads', 'lead')}."
    return Result(winners=list(s.winners), scores=[float(orbs_owned(s, i)) for i in range(s.seats)], summary=summary)
