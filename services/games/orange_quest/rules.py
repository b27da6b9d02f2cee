"""Orange Quest rules: setup, decide, the secret choices, legal commands, to_move, status.

Every command is first checked (:func:`check`, raising Rejection, emitting nothing), then
carried out on a :class:`~services.games.orange_quest.flow.Flow`, which then runs the day on
until the game waits for input again. Source: rulebooks/orange-quest.txt and RULINGS.md
"Orange Quest"; the rulings taken here are listed on docs/games/orange_quest.md.

Setup draws, in order: ``shuffle`` of the 6 heroes (seat i gets the i-th), ``shuffle`` of the
102 action cards (cards.toml order), ``shuffle`` of the 10 locations, ``shuffle`` of the 5
bosses other than Candy Joe (the first ``days - 1`` lie on top of Candy Joe), ``randbelow(seats)``
(the first player); then 5 cards each from the deck top, from the first player clockwise.
"""

from __future__ import annotations

import itertools

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.orange_quest import (
    AbilityUsed,
    Accept,
    AgreementFailed,
    CandiesGiven,
    CardPlayed,
    ChainResolved,
    Challenge,
    Convert,
    Distribute,
    DuelEnded,
    DuelStarted,
    EquipmentUsed,
    GameSetUp,
    GiveCandies,
    GiveCard,
    GivingClosed,
    GivingOpened,
    OrangeQuestOptions,
    PartyEnded,
    Pass,
    Passed,
    Pick,
    Play,
    ProposalAccepted,
    Propose,
    Proposed,
    PutIn,
    SharingStarted,
    Stage,
    Throw,
    TurnStarted,
    UseAbility,
    UseEquipment,
)
from services.games.orange_quest.content import BOSSES, CARDS, HEROES, LAST_BOSS, LOCATIONS, PACK
from services.games.orange_quest.effects import ABILITY_HANDLERS, EFFECTS, USES
from services.games.orange_quest.flow import Flow
from services.games.orange_quest.state import (
    HAND_LIMIT,
    QState,
    convert_seats,
    net,
    order_from,
    responders,
)
from services.kernel import Rejection
from services.kernel.secret import SecretChoice

BEATS = {("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")}
SHAPES = ("rock", "paper", "scissors")
RPS_UNDECIDED = 3
"""House bound: after 3 rock-paper-scissors rounds in a row without a single winner, the rest
of the pool is dealt peaceably (so a sharing always ends)."""
LEGAL_SAMPLE = 60
"""How many commands ``legal_commands`` lists at most (any valid command is accepted)."""


def initial_state(o: OrangeQuestOptions, seats: int) -> QState:
    """The state before setup."""
    side = ""
    if o.strengthening == "on" or (o.strengthening == "auto" and seats >= 5):
        side = "six" if seats == 6 else "five"
    return QState(seats=seats, days=o.days, sharing=o.sharing, window_seconds=o.window_seconds,
                  agree_seconds=o.agree_seconds, half_health=o.half_health, strengthening=side)


def check_options(o: OrangeQuestOptions, seats: int) -> None:
    """Raise Rejection ``bad_options`` for an option out of its bounds."""
    if not 4 <= o.days <= 6:
        raise Rejection("bad_options", "days must be 4 to 6 (rulebook Game Process).")
    if not 0 <= o.window_seconds <= 600:
        raise Rejection("bad_options", "window_seconds must be 0 to 600.")
    if not 5 <= o.agree_seconds <= 600:
        raise Rejection("bad_options", "agree_seconds must be 5 to 600.")


def setup(o: OrangeQuestOptions, seats: int, chance) -> list[Event]:
    """Heroes, decks, first player, 5 cards each, then day 1 runs until it waits for input."""
    s = initial_state(o, seats)
    heroes = chance.shuffle(list(HEROES))[:seats]
    deck = chance.shuffle(list(PACK))
    locations = chance.shuffle(list(LOCATIONS))
    bosses = chance.shuffle([b for b in BOSSES if b != LAST_BOSS])[:o.days - 1] + [LAST_BOSS]
    first = chance.randbelow(seats)
    f = Flow(s, chance)
    f.emit(GameSetUp(heroes=heroes, first=first, days=o.days, deck=deck, locations=locations, bosses=bosses,
                     strengthening=s.strengthening))
    for seat in order_from(f.s, first):
        f.draw(seat, 5, "setup")
    f.start_day(1, first)
    f.run()
    return f.events


# ---------------------------------------------------------------------------------------------
# Checks (no events; raise Rejection)


def _secret_open(s: QState) -> bool:
    return secret_choice(s) is not None


def _in_hand(s: QState, seat: int, card: str) -> None:
    if card not in s.hands[seat]:
        raise Rejection("card_not_in_hand", f"{card[:40]!r} is not in your hand.")


def _seat_ok(s: QState, target: int | None) -> bool:
    return target is not None and 0 <= target < s.seats


def _check_target(s: QState, seat: int, cmd: Play) -> None:
    card = CARDS[cmd.card]
    if card.target == "none":
        if cmd.target is not None and card.effect != "block":
            raise Rejection("no_target", f"{card.name} names no player.")
        return
    if not _seat_ok(s, cmd.target) or (card.target == "other" and cmd.target == seat):
        who = "another player" if card.target == "other" else "a player"
        raise Rejection("bad_target", f"{card.name} names {who} (a seat 0 to {s.seats - 1}).")


def _check_play(s: QState, seat: int, cmd: Play) -> None:
    _in_hand(s, seat, cmd.card)
    card = CARDS[cmd.card]
    if s.window is not None:
        if card.effect != "block":
            raise Rejection("window_open", "A response window is open: only a Block or a pass now.")
        if seat == s.window.chain[-1].seat:
            raise Rejection("own_card", "You cannot Block your own card.")
        if seat in s.window.passed:
            raise Rejection("already_passed", "You passed in this response window.")
        return
    if _secret_open(s):
        raise Rejection("secret_choice_open", "A simultaneous secret choice is open: cards wait until it is revealed.")
    if card.frame == "quick":
        if card.effect == "block":
            if not _seat_ok(s, cmd.target) or cmd.item not in s.equipment[cmd.target]:  # type: ignore[index]
                raise Rejection("nothing_to_block", "Outside a response window a Block destroys an equipment card: "
                                                    "name its owner (target) and the card (item).")
            return
        _check_target(s, seat, cmd)
        return
    if card.frame == "combat":
        c = s.combat
        if c is None or s.phase not in ("fight", "duel"):
            raise Rejection("wrong_phase", "Combat cards are played only in a boss fight or a duel.")
        if seat != c.turn and (c.kind == "fight" or seat in c.seats):
            raise Rejection("not_your_turn", f"It is seat {c.turn}'s turn to play combat cards.")
        if card.effect == "reduce":
            target = _reduce_target(s, seat, cmd)
            if target is None or c.dealt[target] <= 0:
                raise Rejection("no_damage_to_reduce", f"{card.name} reduces the damage of a player who has dealt damage.")
        elif cmd.target is not None:
            raise Rejection("no_target", f"{card.name} names no player.")
        return
    if s.phase != "party":
        raise Rejection("wrong_phase", "Party cards are played only at the party.")
    if seat != s.turn:
        raise Rejection("not_your_turn", f"It is seat {s.turn}'s party turn.")
    _check_target(s, seat, cmd)


def _reduce_target(s: QState, seat: int, cmd: Play) -> int | None:
    """Fight: the named player. Duel: the opponent of the duellist whose turn it is."""
    c = s.combat
    assert c is not None
    if c.kind == "fight":
        return cmd.target if _seat_ok(s, cmd.target) else None
    other = c.seats[1] if c.turn == c.seats[0] else c.seats[0]
    if cmd.target is not None and cmd.target != other:
        return None
    return other


def _check_ability(s: QState, seat: int, cmd: UseAbility) -> None:
    ability = HEROES[s.heroes[seat]].ability
    if ability == "keep_candies":
        raise Rejection("automatic_ability", "Joy's ability acts by itself when you would lose candies.")
    if s.powerlessness:
        raise Rejection("powerlessness", "Powerlessness: hero abilities do not work today.")
    if s.hero_turned[seat]:
        raise Rejection("ability_used", "Your hero's ability was already used today.")
    if ability == "coin_boost" and not _has_damage(s, seat):
        raise Rejection("no_damage_card", "Roy's flip strengthens a damage card you played in this fight or duel.")
    if ability == "swap_two":
        if cmd.card is None:
            raise Rejection("name_a_card", "Name the card from your hand to discard (card).")
        _in_hand(s, seat, cmd.card)
    if ability == "scout_combat" and not (s.deck or s.discard):
        raise Rejection("empty_deck", "The action deck and the discard pile are empty.")


def _has_damage(s: QState, seat: int) -> bool:
    c = s.combat
    return c is not None and s.phase in ("fight", "duel") and c.dealt[seat] > 0


def _check_equipment(s: QState, seat: int, cmd: UseEquipment) -> None:
    if cmd.card not in s.equipment[seat]:
        raise Rejection("not_equipped", f"{cmd.card[:40]!r} is not attached to your hero.")
    if s.breakage:
        raise Rejection("breakage", "Breakage: equipment cannot be used today.")
    if cmd.card in s.used:
        raise Rejection("equipment_used", "This equipment was already used today.")
    if CARDS[cmd.card].use == "boost" and not _has_damage(s, seat):
        raise Rejection("no_damage_card", "Brass Knuckles strengthen a damage card you played in this fight or duel.")


def _check_any_moment(s: QState, seat: int) -> None:
    """Abilities and equipment: whenever the game waits for input, outside windows and secret choices."""
    if s.window is not None:
        raise Rejection("window_open", "A response window is open: only a Block or a pass now.")
    if _secret_open(s):
        raise Rejection("secret_choice_open", "A simultaneous secret choice is open: wait until it is revealed.")


def _check_pass(s: QState, seat: int) -> None:
    if s.window is not None:
        if seat not in responders(s):
            raise Rejection("not_responding", "You have nothing to answer in this response window.")
        return
    if s.phase in ("fight", "duel"):
        if s.combat is None or seat != s.combat.turn:
            raise Rejection("not_your_turn", "It is not your turn in this fight.")
        return
    if s.phase == "party":
        if seat != s.turn:
            raise Rejection("not_your_turn", f"It is seat {s.turn}'s party turn.")
        return
    if s.phase == "share" and s.share is not None and s.share.variant == "agree":
        if seat not in s.share.seats:
            raise Rejection("not_sharing", "You do not share this reward.")
        return
    if s.phase == "gift" and s.gift is not None:
        if seat != s.gift.winner:
            raise Rejection("not_your_turn", f"Seat {s.gift.winner} decides what to give its helpers.")
        return
    raise Rejection("nothing_to_pass", "Nothing to pass now.")


def gift_left(s: QState) -> int:
    """How many won candies the duel's winner may still give (those still in its stash)."""
    g = s.gift
    return 0 if g is None else sum(1 for c in g.cards if c in s.stashes[g.winner])


def _check_give_candies(s: QState, seat: int, cmd: GiveCandies) -> None:
    """Only the winner, right after its duel, to a player who helped it, at most the candies it won."""
    g = s.gift
    if s.window is not None:
        raise Rejection("window_open", "A response window is open: only a Block or a pass now.")
    if s.phase != "gift" or g is None or seat != g.winner:
        raise Rejection("not_giving", "Only the winner of a duel, right after it, gives its helpers candies it won.")
    if cmd.to not in g.helpers:
        raise Rejection("not_a_helper", f"Give candies to a player who helped you in the duel: seats {list(g.helpers)}.")
    left = gift_left(s)
    if not 1 <= cmd.count <= left:
        raise Rejection("bad_count", f"Give 1 to {left} of the candies you won in the duel.")


def _pool(s: QState) -> list[str]:
    """The cards shared on the table (no window is open while they are handed out)."""
    chain = {link.card for link in s.window.chain} if s.window is not None else set()
    return [c for c in s.table if c not in chain]


def _check_distribute(s: QState, seat: int, cmd: Distribute) -> None:
    if s.window is not None:
        raise Rejection("window_open", "A response window is open: only a Block or a pass now.")
    if s.phase == "treasure":
        if seat not in s.givers or not s.asides[seat]:
            raise Rejection("not_distributing", "You have no Treasure cards to hand out.")
        if len(cmd.to) != len(s.asides[seat]) or any(not _seat_ok(s, t) or t == seat for t in cmd.to):
            raise Rejection("bad_distribution", f"Name another player for each of your {len(s.asides[seat])} cards.")
        return
    if s.phase == "others" and s.share is not None:
        if seat != s.share.distributor:
            raise Rejection("not_distributing", f"Seat {s.share.distributor} hands out the others' reward.")
        if len(cmd.to) != len(_pool(s)) or any(t not in s.share.seats for t in cmd.to):
            raise Rejection("bad_distribution", f"Name one of seats {list(s.share.seats)} for each of the "
                                                f"{len(_pool(s))} cards.")
        return
    raise Rejection("wrong_phase", "Nothing to hand out now.")


def _check_agree(s: QState, seat: int, cmd: Command) -> None:
    sh = s.share
    if s.window is not None:
        raise Rejection("window_open", "A response window is open: only a Block or a pass now.")
    if s.phase != "share" or sh is None or sh.variant != "agree":
        raise Rejection("wrong_phase", "Proposals are made only while sharing by We had better agree.")
    if seat not in sh.seats:
        raise Rejection("not_sharing", "You do not share this reward.")
    if isinstance(cmd, Propose):
        if len(cmd.to) != len(_pool(s)) or any(t not in sh.seats for t in cmd.to):
            raise Rejection("bad_distribution", f"Name one of seats {list(sh.seats)} for each of the {len(_pool(s))} cards.")
    elif sh.proposer is None:
        raise Rejection("no_proposal", "There is no proposal to accept yet.")
    elif seat in sh.accepted:
        raise Rejection("already_accepted", "You have accepted this proposal.")


def check(s: QState, seat: int, cmd: Command) -> None:
    """Raise Rejection unless ``seat`` may send ``cmd`` now (no events). Codes: docs/games/orange_quest.md."""
    if s.phase == "over":
        raise Rejection("game_over", "The game is over.")
    conv = convert_seats(s)
    if isinstance(cmd, Convert):
        if seat not in conv:
            raise Rejection("not_over_limit", "You hold at most 7 cards: nothing to convert.")
        hand = s.hands[seat]
        surplus = len(hand) - HAND_LIMIT
        if len(set(cmd.cards)) != len(cmd.cards) or any(c not in hand for c in cmd.cards) or len(cmd.cards) != surplus:
            raise Rejection("bad_conversion", f"Name exactly {surplus} different cards of your hand to become candy.")
        return
    if conv:
        raise Rejection("must_convert", f"Seats {conv} hold more than 7 cards and convert the surplus to candy first.")
    if isinstance(cmd, Play):
        if cmd.card not in CARDS:
            raise Rejection("card_not_in_hand", f"{cmd.card[:40]!r} is not in your hand.")
        _check_play(s, seat, cmd)
    elif isinstance(cmd, Pass):
        _check_pass(s, seat)
    elif isinstance(cmd, UseAbility):
        _check_any_moment(s, seat)
        _check_ability(s, seat, cmd)
    elif isinstance(cmd, UseEquipment):
        _check_any_moment(s, seat)
        _check_equipment(s, seat, cmd)
    elif isinstance(cmd, Challenge):
        if s.window is not None:
            raise Rejection("window_open", "A response window is open: only a Block or a pass now.")
        if s.phase != "party":
            raise Rejection("wrong_phase", "Duels are started only at the party.")
        if seat != s.turn:
            raise Rejection("not_your_turn", f"It is seat {s.turn}'s party turn.")
        if s.sacred_place:
            raise Rejection("sacred_place", "Sacred Place: no duels today.")
        if seat in s.duels_started:
            raise Rejection("duel_already_started", "You started a duel at this party already.")
        if not _seat_ok(s, cmd.target) or cmd.target == seat:
            raise Rejection("bad_target", "Challenge another player.")
        if cmd.target in s.attacked:
            raise Rejection("already_attacked", f"Seat {cmd.target} was challenged at this party already.")
    elif isinstance(cmd, Distribute):
        _check_distribute(s, seat, cmd)
    elif isinstance(cmd, Propose | Accept):
        _check_agree(s, seat, cmd)
    elif isinstance(cmd, GiveCandies):
        _check_give_candies(s, seat, cmd)
    else:
        raise Rejection("wrong_phase", "That command is a secret choice, made only while one is open.")


# ---------------------------------------------------------------------------------------------
# Carrying commands out


def decide(s: QState, seat: int, cmd: Command, chance) -> list[Event]:
    """Check ``cmd`` (Rejection), carry it out, run the day on until it waits for input."""
    check(s, seat, cmd)
    f = Flow(s, chance)
    if isinstance(cmd, Convert):
        f.move(f"hand:{seat}", f"stash:{seat}", cmd.cards, "hand_limit")
    elif isinstance(cmd, Play):
        _play(f, seat, cmd)
    elif isinstance(cmd, Pass):
        _pass(f, seat)
    elif isinstance(cmd, UseAbility):
        f.emit(AbilityUsed(seat=seat, hero=s.heroes[seat]))
        ABILITY_HANDLERS[HEROES[s.heroes[seat]].ability](f, seat, cmd.card)
    elif isinstance(cmd, UseEquipment):
        f.emit(EquipmentUsed(seat=seat, card=cmd.card))
        USES[CARDS[cmd.card].use](f, seat, CARDS[cmd.card])
    elif isinstance(cmd, Challenge):
        f.emit(DuelStarted(challenger=seat, challenged=cmd.target))
    elif isinstance(cmd, Distribute):
        _distribute(f, seat, cmd.to)
    elif isinstance(cmd, Propose):
        f.emit(Proposed(seat=seat, to=list(cmd.to)))
    elif isinstance(cmd, GiveCandies):
        g = s.gift
        assert g is not None
        f.emit(CandiesGiven(seat=seat, to=cmd.to, count=cmd.count))
        f.move(f"stash:{seat}", f"stash:{cmd.to}", [c for c in g.cards if c in s.stashes[seat]][:cmd.count], "duel_gift")
        if not gift_left(f.s):
            _close_gift(f)
    elif isinstance(cmd, Accept):
        f.emit(ProposalAccepted(seat=seat))
        sh = f.s.share
        if sh is not None and set(sh.seats) <= set(sh.accepted):
            _hand_out(f, list(sh.proposal), "agreed")
            f.emit(Stage())
    f.run()
    return f.events


def _play(f: Flow, seat: int, cmd: Play) -> None:
    s = f.s
    card = CARDS[cmd.card]
    helps = None
    target = cmd.target
    if card.frame == "combat" and s.combat is not None and s.combat.kind == "duel":
        if seat not in s.combat.seats:
            helps = s.combat.turn
        if card.effect == "reduce":
            target = _reduce_target(s, seat, cmd)
    f.emit(CardPlayed(seat=seat, card=cmd.card, target=target, item=cmd.item, helps=helps))
    if card.frame == "party":
        EFFECTS[card.effect](f, seat, card, target, cmd.item)
        f.move("table", "discard", [c for c in f.s.table if c == cmd.card], "played")


def _resolve_chain(f: Flow) -> None:
    """All passed: the chain applies from the top; each Block that applies cancels the card below."""
    w = f.s.window
    assert w is not None
    chain = list(w.chain)
    applies = [True] * len(chain)
    for i in range(len(chain) - 1, 0, -1):
        if applies[i] and CARDS[chain[i].card].effect == "block":
            applies[i - 1] = False
    f.emit(ChainResolved(cards=[link.card for link in chain], applies=applies))
    bottom = chain[0]
    if applies[0]:
        card = CARDS[bottom.card]
        EFFECTS[card.effect](f, bottom.seat, card, bottom.target, bottom.item)
    f.move("table", "discard", [link.card for link in chain if link.card in f.s.table], "chain_resolved")


def _pass(f: Flow, seat: int) -> None:
    s = f.s
    if s.window is not None:
        f.emit(Passed(seat=seat))
        if not responders(f.s):
            _resolve_chain(f)
        return
    if s.phase == "gift":
        _close_gift(f)
        return
    if s.phase == "share":
        f.emit(AgreementFailed(seat=seat))
        f.move("table", "discard", _pool(f.s), "not_agreed")
        f.emit(Stage())
        return
    if s.phase in ("fight", "duel"):
        c = s.combat
        assert c is not None
        f.emit(Passed(seat=seat, played=c.played))
        c = f.s.combat
        assert c is not None
        if c.kind == "fight":
            if c.passes >= s.seats:
                f.end_fight()
            else:
                f.emit(TurnStarted(seat=(seat + 1) % s.seats))
        elif c.passes >= 2:
            _end_duel(f)
        else:
            f.emit(TurnStarted(seat=c.seats[1] if seat == c.seats[0] else c.seats[0]))
        return
    f.emit(Passed(seat=seat, played=s.played))
    if f.s.passes >= s.seats:
        f.emit(PartyEnded())
    else:
        f.emit(TurnStarted(seat=(seat + 1) % s.seats))


def _end_duel(f: Flow) -> None:
    """More net damage wins 3 candies (all, if fewer; Joy not protected); equal or none: a draw.
    Everyone who spent combat cards takes as many from the deck (rulebook "Duel")."""
    c = f.s.combat
    assert c is not None
    a, b = c.seats
    da, db = net(c, a), net(c, b)
    winner = a if da > db else b if db > da else None
    taken = 0
    won: tuple[str, ...] = ()
    if winner is not None:
        loser = b if winner == a else a
        taken = min(3, len(f.s.stashes[loser]))
        before = len(f.s.stashes[winner])
        f.steal_candies(winner, loser, 3, "duel", protected=False)
        won = f.s.stashes[winner][before:]
    f.move("table", "discard", f.s.table, "duel_over")
    f.emit(DuelEnded(challenger=a, challenged=b, damage=[da, db], winner=winner, taken=taken, refills=list(c.spent)))
    for seat in order_from(f.s, a):
        if c.spent[seat]:
            f.draw(seat, c.spent[seat], "duel_refill")
    helpers = [h for h, d in c.helpers if d == winner]
    if won and helpers:  # RULINGS.md duels: the winner may give helpers candies from those it won
        f.emit(GivingOpened(winner=winner, helpers=helpers, count=len(won), cards=list(won)))  # type: ignore[arg-type]


def _close_gift(f: Flow) -> None:
    g = f.s.gift
    assert g is not None
    f.emit(GivingClosed(winner=g.winner, given=g.given))


def _hand_out(f: Flow, to: list[int], reason: str) -> None:
    pool = _pool(f.s)
    for seat in sorted(set(to)):
        f.move("table", f"hand:{seat}", [c for c, t in zip(pool, to, strict=True) if t == seat], reason)


def _distribute(f: Flow, seat: int, to: list[int]) -> None:
    if f.s.phase == "treasure":
        cards = list(f.s.asides[seat])
        for t in sorted(set(to)):
            f.move(f"aside:{seat}", f"hand:{t}", [c for c, x in zip(cards, to, strict=True) if x == t], "treasure")
        if not any(f.s.asides[g] for g in f.s.givers):
            f.emit(Stage())
        return
    _hand_out(f, to, "others_reward")
    f.emit(Stage())


# ---------------------------------------------------------------------------------------------
# Secret choices (services/kernel/secret.py)


def secret_choice(s: QState) -> SecretChoice | None:
    """Fog of Generosity, Chaos, a rock-paper-scissors round or an "I take what I want" stage."""
    if s.window is not None or convert_seats(s):
        return None
    if s.phase in ("fog", "chaos"):
        seats = tuple(i for i in range(s.seats) if s.hands[i])
        return SecretChoice(key=f"{s.phase}:{s.day}", seats=seats) if seats else None
    if s.phase == "share" and s.share is not None and s.share.variant in ("rps", "take"):
        return SecretChoice(key=f"{s.share.variant}:{s.shares}:{s.share.stage}", seats=tuple(sorted(s.share.seats)))
    return None


def check_choice(s: QState, seat: int, cmd: Command) -> None:
    """Raise Rejection unless ``seat`` may choose ``cmd`` (judged on its own hand and the public pool).

    Codes: ``wrong_choice``, ``card_not_in_hand``, ``bad_put_in``, ``not_in_pool``."""
    want = {"fog": GiveCard, "chaos": PutIn}.get(s.phase) or {"rps": Throw, "take": Pick}[s.share.variant]  # type: ignore[union-attr]
    if not isinstance(cmd, want):
        raise Rejection("wrong_choice", f"The open choice takes {want.__struct_config__.tag}.")
    if isinstance(cmd, GiveCard):
        _in_hand(s, seat, cmd.card)
    elif isinstance(cmd, PutIn):
        k = min(2, len(s.hands[seat]))
        if len(cmd.cards) != k or len(set(cmd.cards)) != k or any(c not in s.hands[seat] for c in cmd.cards):
            raise Rejection("bad_put_in", f"Put exactly {k} different cards of your hand in the centre.")
    elif cmd.card not in _pool(s):  # type: ignore[attr-defined]
        raise Rejection("not_in_pool", "Name a card of the reward on the table.")


def resolve_choices(s: QState, choices: dict[int, Command], chance) -> list[Event]:
    """After the reveal: the Fog passes, the Chaos deal, a sharing round or stage."""
    f = Flow(s, chance)
    if s.phase == "fog":
        for seat in order_from(s, s.first):
            if seat in choices:
                to = (seat + s.direction) % s.seats
                f.move(f"hand:{seat}", f"hand:{to}", [choices[seat].card], "fog_of_generosity")  # type: ignore[attr-defined]
        f.emit(Stage())
    elif s.phase == "chaos":
        for seat in order_from(s, s.first):
            if seat in choices:
                f.move(f"hand:{seat}", "centre", choices[seat].cards, "chaos")  # type: ignore[attr-defined]
        pile = chance.shuffle(list(f.s.centre))
        seats = order_from(s, s.first)
        for i, card in enumerate(pile):
            f.move("centre", f"hand:{seats[i % len(seats)]}", [card], "chaos")
        f.emit(Stage())
    else:
        _share_round(f, choices)
    f.run()
    return f.events


def _share_round(f: Flow, choices: dict[int, Command]) -> None:
    s = f.s
    sh = s.share
    assert sh is not None
    undecided = sh.undecided
    if sh.variant == "rps":
        score = {i: sum((choices[i].shape, choices[j].shape) in BEATS for j in choices if j != i)  # type: ignore[attr-defined]
                 for i in choices}
        top = max(score.values())
        best = [i for i in score if score[i] == top]
        if top > 0 and len(best) == 1:
            f.move("table", f"hand:{best[0]}", [choices[best[0]].card], "rps")  # type: ignore[attr-defined]
            undecided = 0
        else:
            undecided += 1
    else:
        pointed: dict[str, list[int]] = {}
        for i in sorted(choices):
            pointed.setdefault(choices[i].card, []).append(i)  # type: ignore[attr-defined]
        for card, who in pointed.items():
            f.move("table", f"hand:{who[0]}" if len(who) == 1 else "discard", [card], "take" if len(who) == 1 else "collision")
        if len(_pool(f.s)) == 1:
            f.move("table", "discard", _pool(f.s), "last_card")
    pool = _pool(f.s)
    if pool and sh.variant == "rps" and undecided >= RPS_UNDECIDED:
        f.deal_evenly(list(sh.seats))
        pool = []
    if not pool:
        f.emit(Stage())
        return
    f.emit(SharingStarted(variant=sh.variant, seats=list(sh.seats), pool=pool, stage=sh.stage + 1, undecided=undecided))


# ---------------------------------------------------------------------------------------------
# Queries


def to_move(s: QState) -> list[int]:
    """Seats the game waits for (the kernel drops those that already made a secret choice)."""
    if s.phase in ("over", "setup"):
        return []
    conv = convert_seats(s)
    if conv:
        return conv
    if s.window is not None:
        return responders(s)
    req = secret_choice(s)
    if req is not None:
        return list(req.seats)
    if s.phase == "treasure":
        return [g for g in s.givers if s.asides[g]]
    if s.phase == "others" and s.share is not None and s.share.distributor is not None:
        return [s.share.distributor]
    if s.phase == "share" and s.share is not None:
        return list(s.share.seats)
    if s.phase in ("fight", "duel") and s.combat is not None:
        return [s.combat.turn]
    if s.phase == "gift" and s.gift is not None:
        return [s.gift.winner]
    if s.phase == "party":
        return [s.turn]
    return []


def decision_seconds(s: QState, seat: int) -> tuple[str, int] | None:
    """The response window's deadline (option ``window_seconds``, 0: none) and We had better
    agree's (``agree_seconds``, rulebook 30 s), for the seats they wait for."""
    if convert_seats(s):
        return None
    if s.window is not None:
        if s.window_seconds and seat in responders(s):
            return f"window:{s.window.id}:{len(s.window.chain)}", s.window_seconds
        return None
    if s.phase == "share" and s.share is not None and s.share.variant == "agree" and seat in s.share.seats:
        return f"agree:{s.shares}", s.agree_seconds
    return None


def default_move(s: QState, seat: int) -> Command | None:
    """A timeout: pass (a window, a turn; We had better agree: no agreement; after a duel: give
    nothing more), convert the last cards, choose the first card(s), hand out cards in turn order."""
    legal = legal_commands(s, seat)
    for c in legal:
        if isinstance(c, Pass):
            return c
    return legal[0] if legal else None


def _quick_plays(s: QState, seat: int) -> list[Command]:
    out: list[Command] = []
    seen: set[str] = set()
    for c in s.hands[seat]:
        card = CARDS[c]
        if card.base in seen:
            continue
        seen.add(card.base)
        if card.frame == "quick" and card.effect == "block":
            if s.window is not None:
                out.append(Play(card=c))
            else:
                out += [Play(card=c, target=t, item=e) for t in range(s.seats) for e in s.equipment[t]]
        elif card.frame in ("quick", "party") or card.effect == "damage":
            targets = [None] if card.target == "none" else [t for t in range(s.seats) if card.target == "any" or t != seat]
            out += [Play(card=c, target=t) for t in targets]
        else:  # reduce
            out += [Play(card=c, target=t) for t in range(s.seats)]
    return out


def _choices(s: QState, seat: int) -> list[Command]:
    req = secret_choice(s)
    if req is None or seat not in req.seats:
        return []
    hand = list(s.hands[seat])
    if s.phase == "fog":
        return [GiveCard(card=c) for c in hand]
    if s.phase == "chaos":
        k = min(2, len(hand))
        return [PutIn(cards=list(p)) for p in itertools.islice(itertools.combinations(hand, k), LEGAL_SAMPLE)]
    pool = _pool(s)
    if s.share is not None and s.share.variant == "rps":
        return [Throw(shape=sh, card=c) for c in pool for sh in SHAPES]
    return [Pick(card=c) for c in pool]


def legal_commands(s: QState, seat: int) -> list[Command]:
    """Commands ``seat`` may send now (a bounded list of LEGAL_SAMPLE; any valid command is accepted)."""
    if s.phase in ("over", "setup"):
        return []
    choices = _choices(s, seat)
    if choices:
        return choices[:LEGAL_SAMPLE]
    cands: list[Command] = []
    conv = convert_seats(s)
    if seat in conv:
        surplus = len(s.hands[seat]) - HAND_LIMIT
        cands += [Convert(cards=list(s.hands[seat][-surplus:])), Convert(cards=list(s.hands[seat][:surplus]))]
    cands.append(Pass())
    n = s.seats
    if s.phase == "treasure" and s.asides[seat]:
        others = [t for t in order_from(s, seat) if t != seat]
        cands.append(Distribute(to=[others[i % len(others)] for i in range(len(s.asides[seat]))]))
    if s.phase == "others" and s.share is not None:
        seats = list(s.share.seats)
        cands.append(Distribute(to=[seats[i % len(seats)] for i in range(len(_pool(s)))]))
    if s.phase == "share" and s.share is not None and s.share.variant == "agree":
        seats = list(s.share.seats)
        cands += [Propose(to=[seats[(i + k) % len(seats)] for i in range(len(_pool(s)))]) for k in range(len(seats))]
        cands.append(Accept())
    if s.phase == "party":
        cands += [Challenge(target=t) for t in range(n) if t != seat]
    if s.phase == "gift" and s.gift is not None:
        cands += [GiveCandies(to=h, count=k) for h in s.gift.helpers for k in range(1, gift_left(s) + 1)]
    cands += _quick_plays(s, seat)
    cands.append(UseAbility(card=s.hands[seat][0] if s.hands[seat] else None))
    cands += [UseEquipment(card=e) for e in s.equipment[seat]]
    out = []
    for c in cands:
        try:
            check(s, seat, c)
        except Rejection:
            continue
        out.append(c)
    return out[:LEGAL_SAMPLE]


def status(s: QState) -> Result | None:
    """The result after the final scoring: most candies + trophies win, a tie shares the victory."""
    if s.phase != "over":
        return None
    if len(s.winners) == 1:
        summary = f"Seat {s.winners[0]} wins with {s.scores[s.winners[0]]} candies and trophies."
    else:
        summary = f"Seats {list(s.winners)} share the victory with {s.scores[s.winners[0]]} each."
    return Result(winners=list(s.winners), scores=[float(x) for x in s.scores], summary=summary)
