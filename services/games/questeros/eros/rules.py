"""Ero's Quest rules: state, setup, decide, evolve, legal commands, status.

Source: rulebooks/questeros.txt "Ero's Quest (Solitaire Adventure)" (Solo Objective,
Difficulty, Solo Game Setup, Turn Actions, Bonus Develop Actions, Allies, Game Terms,
Encounters, Combat, Abilities); RULINGS.md "Questeros" (Ero's Quest rulings); the rulings
taken here are numbered in docs/games/eros_quest.md ("E1".. in comments).

Setup draws one ``shuffle`` of the deck's cards in canonical order (deck.toml order); the
shuffled list is the deck, top first; the hand is its first 5 cards.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import msgspec

from schemas.base import Event, Record
from schemas.eros_quest import (
    AdventureSetUp,
    AllyPlaced,
    Attack,
    Attacked,
    CardChosen,
    CardDestroyed,
    CardDeveloped,
    CardRecovered,
    CardsDrawn,
    CardsForgotten,
    CardsLooked,
    CardsRecalled,
    CardsRecovered,
    Choose,
    CombatStarted,
    Develop,
    DiscardReturned,
    Encounter,
    EncounterCompleted,
    EncounterFaced,
    Forget,
    HitTaken,
    Learn,
    OrbUsed,
    Purchase,
    QuestEnded,
    Recover,
    Rest,
    Rested,
    Support,
    TakeHit,
)
from services.games.questeros.content import DECK_FILE, load_deck
from services.games.questeros.eros.encounters import BOSSES, PACK, EncounterCard
from services.kernel import Rejection, SeededChance

CARDS, ORDER = load_deck(DECK_FILE, frozenset({"mentor_look"}))
INDEX = {c: i for i, c in enumerate(ORDER)}
HAND = 5
STACKS = ("blades", "staves", "orbs")
ACTIONS = ("develop", "purchase", "forget", "learn", "encounter", "recover", "rest")
"""The seven Turn Actions, each at most once a turn (rulebook "Turn Actions")."""
HEALTH = tuple(f"c{v}" for v in range(1, 11))
GODS = ("adwanis", "nekradis")


def worth(card: str) -> int:
    """A card's value: 1-10 as printed, 11-14 worth 2-5 (the sum of the two digits; rulebook
    "RECOVER" and "Combat"), an Epic its number."""
    v = CARDS[card].value
    return v - 9 if CARDS[card].kind == "class" and v > 10 else v


class Fight(Record):
    """A Combat in progress (rulebook "Combat")."""

    epic: str
    value: int
    dealt: int = 0
    step: str = "hit"
    """``hit`` (absorbing the Epic's hit), ``attack``, ``support``."""
    remaining: int = 0
    round: int = 1
    damage_in: tuple[str, ...] = ("cups",)
    no_allies: bool = False


class EState(Record):
    """The whole state of one adventure. The deck order is secret; the hand and looked-at cards
    are the player's (views.py)."""

    phase: str = "setup"
    """``setup``, ``turn``, ``look`` (a look awaits ``choose``), ``combat``, ``over``."""
    turn: int = 0
    hand: tuple[str, ...] = ()
    deck: tuple[str, ...] = ()
    """Top first."""
    discard: tuple[str, ...] = ()
    destroyed: tuple[str, ...] = ()
    blades: tuple[str, ...] = ()
    staves: tuple[str, ...] = ()
    orbs: tuple[str, ...] = ()
    cups: tuple[str, ...] = HEALTH
    used: tuple[str, ...] = ()
    """Used play-area cards (canonical order)."""
    allies: tuple[str, ...] = ()
    epics: tuple[str, ...] = tuple(f"e{v}" for v in range(1, 22))
    """The Epic stack, top first (the Warlock on top, the Dragon at the bottom)."""
    completed: tuple[str, ...] = ()
    aside: tuple[str, ...] = ()
    """The Warlock and the cards placed under him (set aside)."""
    given: tuple[str, ...] = ()
    under: tuple[str, ...] = ()
    """Cards Given to the Encounter under way (under its Epic card until it is completed)."""
    """Cards Given to Encounters (the Epic discard pile)."""
    defeated: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    bonus: tuple[str, ...] = ()
    looking: tuple[str, ...] = ()
    fight: Fight | None = None
    won: bool | None = None
    reason: str = ""
    practice: bool = False


def initial_state(practice: bool = False) -> EState:
    """The state before setup (``practice``: a practice start, E9)."""
    return EState(practice=practice)


def canonical(cards: Iterable[str]) -> list[str]:
    """``cards`` in deck.toml order."""
    return sorted(cards, key=INDEX.__getitem__)


def setup_orbs(difficulty: int) -> list[str]:
    """The Orbs beside the Jester: 1-3, minus the 3 (difficulty 1) and the 2 (difficulty 2)."""
    return [f"o{v}" for v in range(1, 4 - difficulty)]


def setup(difficulty: int, chance, practice=None) -> list[Event]:
    """Solo Game Setup: the play area, the shuffled 41-card deck (42-43 with difficulty), a hand
    of 5 (the deck's first 5 cards). A ``practice`` start (E9) places its play area and hand and
    shuffles every other Class card into the deck."""
    if practice is not None:
        placed = {*practice.blades, *practice.staves, *practice.orbs, *HEALTH, *practice.hand, *practice.allies}
        cards = [c for c in ORDER if CARDS[c].kind == "class" and c not in placed]
        deck = chance.shuffle(cards)
        first = int(practice.epic[1:])
        return [AdventureSetUp(orbs=list(practice.orbs), hand=canonical(practice.hand), deck=deck, deck_count=len(deck),
                               blades=list(practice.blades), staves=list(practice.staves), used=canonical(practice.used),
                               allies=list(practice.allies), completed=[f"e{v}" for v in range(1, first)])]
    orbs = setup_orbs(difficulty)
    in_play = {"b1", "s1", *orbs, *HEALTH}
    cards = [c for c in ORDER if CARDS[c].kind == "class" and c not in in_play]
    deck = chance.shuffle(cards)
    return [AdventureSetUp(orbs=orbs, hand=canonical(deck[:HAND]), deck=deck[HAND:], deck_count=len(deck) - HAND)]


def check_practice(p) -> None:
    """Raise Rejection ``bad_options`` unless ``p`` is a possible play area (E9)."""
    def bad(why: str) -> Rejection:
        return Rejection("bad_options", f"practice: {why}.")
    if p.epic not in PACK:
        raise bad("epic is one of e1..e21")
    for st, cards in (("blades", p.blades), ("staves", p.staves), ("orbs", p.orbs)):
        want = [f"{st[0]}{v}" for v in range(1, len(cards) + 1)]
        if cards != want or len(cards) > 10 or (st != "orbs" and not cards):
            raise bad(f"{st} is a stack 1, 2, ... (at most 10) in order, e.g. {want or [st[0] + '1']}")
    every = [*p.blades, *p.staves, *p.orbs, *p.hand, *p.allies]
    if any(c not in CARDS or CARDS[c].kind != "class" for c in every) or len(set(every)) != len(every) or set(every) & set(HEALTH):
        raise bad("hand and allies are distinct Class cards, not in the play area nor Cups 1-10")
    area = {*p.blades, *p.staves, *p.orbs, *HEALTH} - {"s1"}
    if any(c not in area for c in p.used) or len(set(p.used)) != len(p.used):
        raise bad("used names play-area cards (never the 1 of Staves), once each")
    if any(CARDS[c].value > 10 for c in p.allies):
        raise bad("an Ally is a card of 1-10")


# ---------------------------------------------------------------------------------------------
# Queries on the play area


def stack_of(card: str) -> str:
    """The stack a Class card develops (``blades``/``staves``/``orbs``), or ``cups``."""
    return CARDS[card].cls


def play_area(s: EState) -> tuple[str, ...]:
    return s.blades + s.staves + s.orbs + s.cups


def usable(s: EState, card: str) -> bool:
    """An Unused play-area card that can be Used (E1: the 1 of Staves never can)."""
    return card in play_area(s) and card not in s.used and card != "s1"


def next_for(s: EState, card: str) -> bool:
    """``card`` is the next number of its Blades, Staves or Orbs stack (stacks run 1-10)."""
    st = stack_of(card)
    if st not in STACKS:
        return False
    top = getattr(s, st)
    return CARDS[card].value == (CARDS[top[-1]].value + 1 if top else 1) <= 10


def hit_cards(s: EState) -> list[str]:
    """Cards that may absorb the current Combat hit."""
    f = s.fight
    pool = [c for cls in f.damage_in for c in (s.cups if cls == "cups" else getattr(s, cls))]  # type: ignore[union-attr]
    return [c for c in pool if usable(s, c)]


# ---------------------------------------------------------------------------------------------
# decide


def _need_action(s: EState, action: str) -> None:
    if action in s.actions:
        raise Rejection("action_done_this_turn", f"{action.upper()} was already done this turn (each action once a turn).")


def _in_hand(s: EState, cards: Sequence[str]) -> None:
    if len(set(cards)) != len(cards):
        raise Rejection("card_not_in_hand", "A card is named twice.")
    for c in cards:
        if c not in s.hand:
            raise Rejection("card_not_in_hand", f"{c!r} is not in your hand.")


def _draw(s: EState, n: int, learn: bool) -> list[Event]:
    return [CardsDrawn(cards=list(s.deck[:n]), learn=learn)] if n > 0 and s.deck else []


def decide(s: EState, seat: int, cmd, chance) -> list[Event]:
    """Events for ``cmd``. Raises Rejection (codes in docs/games/eros_quest.md)."""
    if s.phase == "over":
        raise Rejection("game_over", "The adventure is over.")
    if s.phase == "look":
        if not isinstance(cmd, Choose):
            raise Rejection("look_pending", f"First choose one of the looked-at cards {list(s.looking)}.")
        return _finish(s, _choose(s, cmd))
    if s.phase == "combat":
        return _finish(s, _combat(s, cmd))
    if isinstance(cmd, (Choose, TakeHit, Attack, Support)):
        raise Rejection("not_now", "That command belongs to a look or a Combat, and none is under way.")
    return _finish(s, _action(s, cmd, chance))


def _action(s: EState, cmd, chance) -> list[Event]:
    if isinstance(cmd, Develop):
        return [_develop(s, cmd.card)]
    if isinstance(cmd, Rest):
        return [Rested(burned=s.deck[0], turn=s.turn + 1)]
    if isinstance(cmd, Purchase):
        _need_action(s, "purchase")
        if cmd.orb not in s.orbs or not usable(s, cmd.orb):
            raise Rejection("orb_not_usable", f"{cmd.orb!r} is not an Unused Orb of your play area.")
        return [OrbUsed(orb=cmd.orb, looked=list(s.deck[:worth(cmd.orb)]))]
    if isinstance(cmd, Forget):
        _need_action(s, "forget")
        if not cmd.cards:
            raise Rejection("nothing_to_forget", "FORGET discards at least one card from your hand.")
        _in_hand(s, cmd.cards)
        return [CardsForgotten(cards=list(cmd.cards))]
    if isinstance(cmd, Learn):
        _need_action(s, "learn")
        if len(s.hand) >= HAND:
            raise Rejection("hand_full", f"LEARN draws until you hold {HAND} cards; you hold {len(s.hand)}.")
        return _draw(s, HAND - len(s.hand), learn=True)
    if isinstance(cmd, Recover):
        _need_action(s, "recover")
        _in_hand(s, [cmd.card])
        if CARDS[cmd.card].value < 11:
            raise Rejection("not_a_court_card", "RECOVER Destroys an 11-14 card from your hand.")
        if stack_of(cmd.target) != stack_of(cmd.card) or cmd.target not in play_area(s):
            raise Rejection("bad_recover_target", f"{cmd.target!r} is not a {stack_of(cmd.card)} card of your play area.")
        if cmd.target not in s.used:
            raise Rejection("bad_recover_target", f"{cmd.target!r} is not Used.")
        if worth(cmd.target) > worth(cmd.card):
            raise Rejection("recover_too_weak", f"{cmd.card} is worth {worth(cmd.card)}: it recovers a card worth at most that, not {worth(cmd.target)}.")
        return [CardRecovered(card=cmd.card, target=cmd.target)]
    if isinstance(cmd, Encounter):
        _need_action(s, "encounter")
        return _encounter(s, PACK[s.epics[0]], cmd, chance)
    raise Rejection("unknown_command", "Ero's Quest knows develop, purchase, choose, forget, learn, encounter, recover, rest, take_hit, attack and support.")


def _develop(s: EState, card: str) -> CardDeveloped:
    """DEVELOP or the bonus Develop (rulebook "Bonus Develop Actions": that card only)."""
    bonus = card in s.bonus
    if not bonus and "develop" in s.actions:
        if s.bonus:
            raise Rejection("not_the_bonus_card", f"DEVELOP was done this turn; the bonus Develop may place only {list(s.bonus)}.")
        _need_action(s, "develop")
    _in_hand(s, [card])
    if stack_of(card) == "cups":
        raise Rejection("cannot_develop_cups", "Cups cards cannot be Developed.")
    if not next_for(s, card):
        st = getattr(s, stack_of(card))
        want = CARDS[st[-1]].value + 1 if st else 1
        raise Rejection("not_next_in_sequence", f"The {stack_of(card).capitalize()} stack takes the {want} next (stacks run 1-10).")
    return CardDeveloped(card=card, stack=stack_of(card), bonus=bonus)


def _choose(s: EState, cmd: Choose) -> list[Event]:
    if cmd.card not in s.looking:
        raise Rejection("not_looked_at", f"Choose one of {list(s.looking)}.")
    rest = list(s.looking)
    rest.remove(cmd.card)
    if sorted(cmd.bottom) != sorted(rest):
        raise Rejection("bad_bottom_order", f"bottom must list every other looked-at card once: {rest}.")
    return [CardChosen(card=cmd.card, bottom=list(cmd.bottom))]


def _unused_orbs(s: EState, orbs: Sequence[str], total: int) -> None:
    if len(set(orbs)) != len(orbs) or any(o not in s.orbs or not usable(s, o) for o in orbs):
        raise Rejection("orb_not_usable", "Every Orb named must be an Unused Orb of your play area, once.")
    got = sum(worth(o) for o in orbs)
    if got < total:
        raise Rejection("requirement_not_met", f"The Orbs must be worth {total} or more, not {got}.")
    if any(got - worth(o) >= total for o in orbs):
        raise Rejection("orb_not_needed", "Use only the Orbs the requirement needs (E6: none superfluous).")


def _encounter(s: EState, enc: EncounterCard, cmd: Encounter, chance) -> list[Event]:
    p = enc.params
    faced = EncounterFaced(epic=enc.epic, cards=list(cmd.cards), orbs=list(cmd.orbs), deter=cmd.deter)
    if cmd.deter and not (p.get("deter_give") or p.get("deter_orbs")):
        raise Rejection("bad_choice", f"{enc.name} cannot be deterred.")
    if enc.require == "combat" and not cmd.deter:
        if cmd.cards or cmd.orbs:
            raise Rejection("bad_choice", f"{enc.name} is fought in Combat: send no cards or orbs (or deter = true).")
        out: list[Event] = [faced]
        deck = list(s.deck)
        for _ in range(p.get("burn_before", 0)):
            if deck:
                out.append(CardDestroyed(card=deck.pop(0), where="deck"))
        return out + [CombatStarted(epic=enc.epic, value=worth(enc.epic))]
    if enc.require == "combat":  # deterred
        if p.get("deter_give"):
            if cmd.orbs or len(cmd.cards) != p["deter_give"]:
                raise Rejection("requirement_not_met", f"Deter {enc.name}: Give exactly {p['deter_give']} cards from your hand.")
            _in_hand(s, cmd.cards)
        else:
            if cmd.cards:
                raise Rejection("bad_choice", f"Deter {enc.name} with Orbs only.")
            _unused_orbs(s, cmd.orbs, p["deter_orbs"])
        return [faced, EncounterCompleted(epic=enc.epic, pile=enc.pile, defeated=True)]
    if enc.require == "nothing":
        if cmd.cards or cmd.orbs:
            raise Rejection("bad_choice", f"{enc.name} asks for no cards or orbs.")
    elif enc.require == "give":
        if cmd.orbs:
            raise Rejection("bad_choice", f"{enc.name} asks for cards from your hand, not Orbs.")
        lo, hi = p.get("min_cards", 1), p.get("max_cards", 1)
        if not lo <= len(cmd.cards) <= hi:
            raise Rejection("requirement_not_met", f"{enc.name}: Give {lo} to {hi} cards.")
        _in_hand(s, cmd.cards)
        classes = [CARDS[c].cls for c in cmd.cards]
        if p.get("classes") and any(c not in p["classes"] for c in classes):
            raise Rejection("requirement_not_met", f"{enc.name} takes only {', '.join(p['classes'])} cards.")
        if p.get("distinct_classes") and len(set(classes)) != len(classes):
            raise Rejection("requirement_not_met", f"{enc.name}: the cards must be of different Classes.")
    elif enc.require == "use_orbs":
        if cmd.cards:
            raise Rejection("bad_choice", f"{enc.name} asks for Orbs, not cards.")
        _unused_orbs(s, cmd.orbs, p["total"])
    elif enc.require == "ally":
        if cmd.orbs or len(cmd.cards) > 1:
            raise Rejection("bad_choice", f"{enc.name}: place at most one card as an Ally.")
        _in_hand(s, cmd.cards)
        if cmd.cards and (CARDS[cmd.cards[0]].cls not in p["classes"] or CARDS[cmd.cards[0]].value > 10):
            raise Rejection("requirement_not_met",
                            f"{enc.name}'s Ally is a {' or '.join(p['classes'])} card of 1-10 (court cards serve only RECOVER and the Bonus).")
    out = [faced] + ([AllyPlaced(card=cmd.cards[0])] if enc.require == "ally" and cmd.cards else [])
    out.append(EncounterCompleted(epic=enc.epic, pile=enc.pile))
    return out + _rewards(s, enc, out, chance)


def _rewards(s: EState, enc: EncounterCard, so_far: list[Event], chance) -> list[Event]:
    out: list[Event] = []
    t = s
    for ev in so_far:
        t = evolve(t, ev)
    for name, p in enc.rewards:
        evs: list[Event] = []
        if name == "draw":
            evs = _draw(t, p["n"], learn=False)
        elif name == "look":
            evs = [CardsLooked(looked=list(t.deck[:p["n"]]))] if t.deck else []
        elif name in ("heal", "recover_class", "recover_all"):
            used = canonical(t.used)
            if name == "heal":
                used = sorted((c for c in used if c in t.cups), key=worth, reverse=True)[:p["n"]]
            elif name == "recover_class":
                used = [c for c in used if stack_of(c) == p["class"]]
            evs = [CardsRecovered(cards=canonical(used))] if used else []
        elif name == "return_discard":
            back = list(t.discard[:p["n"]])
            evs = [DiscardReturned(cards=back, count=len(back))] if back else []
        elif name == "recall_next":
            back = [c for c in t.discard if next_for(t, c)]
            evs = [CardsRecalled(cards=back)] if back else []
        elif name == "shuffle_discard":
            new = chance.shuffle(canonical(t.deck + t.discard))
            evs = [DiscardReturned(cards=new, count=len(new), shuffled=True)] if t.discard else []
        for ev in evs:
            t = evolve(t, ev)
        out += evs
    return out


def _combat(s: EState, cmd) -> list[Event]:
    f = s.fight
    assert f is not None
    if isinstance(cmd, TakeHit):
        if f.step != "hit":
            raise Rejection("not_now", "The Epic's hit is already absorbed: attack (or call support).")
        if cmd.card not in hit_cards(s):
            what = " or ".join(f.damage_in)
            raise Rejection("cannot_take_hit", f"{cmd.card!r} is not an Unused {what} card of your play area.")
        return [HitTaken(card=cmd.card, remaining=max(0, f.remaining - worth(cmd.card)))]
    if isinstance(cmd, Attack):
        if f.step != "attack":
            raise Rejection("not_now", "Absorb the Epic's hit first." if f.step == "hit" else "Call support (or none) now.")
        cards = []
        for c, st in ((cmd.blade, "blades"), (cmd.staff, "staves")):
            if c:
                if c not in getattr(s, st) or not usable(s, c):
                    raise Rejection("cannot_attack_with", f"{c!r} is not an Unused {st.capitalize()} card of your play area.")
                cards.append(c)
        return _hit_epic(s, cards, support=False)
    if isinstance(cmd, Support):
        if f.step != "support":
            raise Rejection("not_now", "Support comes after an attack that did not defeat the Epic.")
        cards = []
        if cmd.bonus:
            _in_hand(s, [cmd.bonus])
            if CARDS[cmd.bonus].cls not in ("blades", "staves") or CARDS[cmd.bonus].value < 11:
                raise Rejection("bad_bonus_card", "The Bonus card is an 11-14 Blades or Staves card from your hand.")
            cards.append(cmd.bonus)
        if cmd.ally:
            if f.no_allies:
                raise Rejection("no_allies_here", f"{PACK[f.epic].name}: no Ally may be played.")
            if cmd.ally not in s.allies:
                raise Rejection("not_an_ally", f"{cmd.ally!r} is not one of your Allies.")
            cards.append(cmd.ally)
        return _hit_epic(s, cards, support=True)
    raise Rejection("combat_under_way", f"A Combat with {PACK[f.epic].name} is under way: take_hit, attack or support.")


def _hit_epic(s: EState, cards: list[str], support: bool) -> list[Event]:
    f = s.fight
    assert f is not None
    dmg = sum(worth(c) for c in cards)
    out: list[Event] = [Attacked(cards=cards, damage=dmg, dealt=f.dealt + dmg, support=support)]
    if f.dealt + dmg >= f.value:
        out.append(EncounterCompleted(epic=f.epic, pile=PACK[f.epic].pile, defeated=True))
    return out


def _finish(s: EState, events: list[Event]) -> list[Event]:
    """Append the end of the adventure if these events bring it (E3: the deck-out loss is at
    once, when the deck is empty outside a look; E4: a hit the Cups cannot take)."""
    t = s
    for ev in events:
        t = evolve(t, ev)
    if t.phase == "over":
        return events
    if any(isinstance(e, EncounterCompleted) and e.epic == "e21" for e in events):
        return events + [QuestEnded(won=True, reason="dragon_defeated")]
    if not t.deck and t.phase != "look":
        return events + [QuestEnded(won=False, reason="deck_empty")]
    if t.phase == "combat" and t.fight is not None and t.fight.step == "hit" and sum(worth(c) for c in hit_cards(t)) < t.fight.remaining:
        return events + [QuestEnded(won=False, reason="ero_fell")]
    return events


# ---------------------------------------------------------------------------------------------
# evolve


def _minus(t: tuple[str, ...], cards: Iterable[str]) -> tuple[str, ...]:
    drop = set(cards)
    return tuple(c for c in t if c not in drop)


def _gainable(s: EState, cards: Iterable[str]) -> tuple[str, ...]:
    return tuple(c for c in cards if next_for(s, c))


def evolve(s: EState, ev: Event) -> EState:
    """Fold one event. Pure and total: only sets fields, never validates."""
    rep = msgspec.structs.replace
    s = rep(s, bonus=())  # a bonus Develop is "immediately" after the gain, or never
    if isinstance(ev, AdventureSetUp):
        return rep(s, phase="turn", turn=1, orbs=tuple(ev.orbs), blades=tuple(ev.blades), staves=tuple(ev.staves),
                   hand=tuple(ev.hand), deck=tuple(ev.deck), used=tuple(ev.used), allies=tuple(ev.allies),
                   completed=tuple(ev.completed), epics=_minus(s.epics, ev.completed))
    if isinstance(ev, CardDeveloped):
        st = ev.stack if ev.stack in STACKS else "blades"
        acts = s.actions if ev.bonus else s.actions + ("develop",)
        return rep(s, hand=_minus(s.hand, [ev.card]), actions=acts, **{st: getattr(s, st) + (ev.card,)})
    if isinstance(ev, OrbUsed):
        return rep(s, phase="look", used=tuple(canonical(set(s.used) | {ev.orb})), actions=s.actions + ("purchase",),
                   looking=tuple(ev.looked), deck=s.deck[len(ev.looked):])
    if isinstance(ev, CardsLooked):
        return rep(s, phase="look", looking=tuple(ev.looked), deck=s.deck[len(ev.looked):])
    if isinstance(ev, CardChosen):
        t = rep(s, phase="turn", hand=s.hand + (ev.card,), looking=(), deck=s.deck + tuple(ev.bottom))
        return rep(t, bonus=_gainable(t, [ev.card]))
    if isinstance(ev, CardsForgotten):
        return rep(s, hand=_minus(s.hand, ev.cards), discard=s.discard + tuple(ev.cards), actions=s.actions + ("forget",))
    if isinstance(ev, CardsDrawn):
        t = rep(s, hand=s.hand + tuple(ev.cards), deck=s.deck[len(ev.cards):],
                actions=s.actions + ("learn",) if ev.learn else s.actions)
        return t if ev.learn else rep(t, bonus=_gainable(t, ev.cards))
    if isinstance(ev, EncounterFaced):
        used = tuple(canonical(set(s.used) | set(ev.orbs)))
        return rep(s, hand=_minus(s.hand, ev.cards), used=used, actions=s.actions + ("encounter",),
                   under=tuple(ev.cards))
    if isinstance(ev, AllyPlaced):
        return rep(s, allies=s.allies + (ev.card,), under=_minus(s.under, [ev.card]))
    if isinstance(ev, CardsRecalled):
        t = rep(s, hand=s.hand + tuple(ev.cards), discard=_minus(s.discard, ev.cards))
        return rep(t, bonus=_gainable(t, ev.cards))
    if isinstance(ev, CardsRecovered):
        return rep(s, used=_minus(s.used, ev.cards))
    if isinstance(ev, DiscardReturned):
        if ev.shuffled:
            return rep(s, deck=tuple(ev.cards), discard=())
        return rep(s, deck=s.deck + tuple(ev.cards), discard=s.discard[len(ev.cards):])
    if isinstance(ev, CardDestroyed):
        return rep(s, deck=_minus(s.deck, [ev.card]), destroyed=s.destroyed + (ev.card,))
    if isinstance(ev, CardRecovered):
        return rep(s, hand=_minus(s.hand, [ev.card]), destroyed=s.destroyed + (ev.card,),
                   used=_minus(s.used, [ev.target]), actions=s.actions + ("recover",))
    if isinstance(ev, CombatStarted):
        p = PACK[ev.epic].params if ev.epic in PACK else {}
        f = Fight(epic=ev.epic, value=ev.value, remaining=ev.value, damage_in=tuple(p.get("damage_in", ["cups"])),
                  no_allies=bool(p.get("no_allies", False)))
        return rep(s, phase="combat", fight=f)
    if isinstance(ev, HitTaken) and s.fight is not None:
        f = rep(s.fight, remaining=ev.remaining, step="hit" if ev.remaining > 0 else "attack")
        return rep(s, used=tuple(canonical(set(s.used) | {ev.card})), fight=f)
    if isinstance(ev, Attacked) and s.fight is not None:
        f = s.fight
        stack_cards = [c for c in ev.cards if c in play_area(s)]
        spent = [c for c in ev.cards if c not in play_area(s)]
        if ev.support or ev.dealt >= f.value:
            nf = rep(f, dealt=ev.dealt, step="hit", remaining=f.value, round=f.round + 1)
        else:
            nf = rep(f, dealt=ev.dealt, step="support")
        return rep(s, fight=nf, used=tuple(canonical(set(s.used) | set(stack_cards))), hand=_minus(s.hand, spent),
                   allies=_minus(s.allies, spent), destroyed=s.destroyed + tuple(spent))
    if isinstance(ev, EncounterCompleted):
        epics = _minus(s.epics, [ev.epic])
        defeated = s.defeated + ((ev.epic,) if ev.defeated else ())
        if ev.pile == "aside":
            return rep(s, epics=epics, phase="turn", fight=None, defeated=defeated,
                       aside=s.aside + (ev.epic,) + s.under, under=())
        return rep(s, epics=epics, phase="turn", fight=None, defeated=defeated, completed=s.completed + (ev.epic,),
                   given=s.given + s.under, under=())
    if isinstance(ev, Rested):
        return rep(s, deck=s.deck[1:], discard=s.discard + (ev.burned,), turn=ev.turn, actions=())
    if isinstance(ev, QuestEnded):
        return rep(s, phase="over", won=ev.won, reason=ev.reason)
    return s


# ---------------------------------------------------------------------------------------------
# Queries


def _subsets(items: Sequence[str], lo: int, hi: int) -> Iterable[tuple[str, ...]]:
    for k in range(lo, min(hi, len(items)) + 1):
        yield from itertools.combinations(items, k)


MAX_ENCOUNTER_CHOICES = 64
MAX_ENCOUNTER_TRIES = 2048
"""E7: ``view.legal`` lists at most 64 ``encounter`` choices, found among the first 2048
candidates (a large hand has thousands of Warlock subsets); every valid choice is accepted."""
_PROBE = SeededChance(bytes(32), 0)
"""A chance for trying commands in ``legal_commands`` (its draws are thrown away)."""


def legal_commands(s: EState, seat: int) -> list:
    """The commands ``decide`` accepts now. E7: where a choice is a set or an order of cards
    (FORGET's cards, ``choose``'s bottom order), one representative per card is listed: FORGET
    of each single card and of the whole hand; ``choose`` with the rest in looked-at order;
    at most ``MAX_ENCOUNTER_CHOICES`` Encounter choices; every other subset or order is
    accepted too."""
    if seat != 0 or s.phase in ("setup", "over"):
        return []
    out: list = []

    def ok(cmd) -> bool:
        try:
            decide(s, 0, cmd, _PROBE)
        except Rejection:
            return False
        return True

    if s.phase == "look":
        for c in s.looking:
            rest = list(s.looking)
            rest.remove(c)
            out.append(Choose(card=c, bottom=rest))
        return out
    if s.phase == "combat":
        f = s.fight
        assert f is not None
        if f.step == "hit":
            return [TakeHit(card=c) for c in hit_cards(s)]
        if f.step == "attack":
            bl = [""] + [c for c in s.blades if usable(s, c)]
            sv = [""] + [c for c in s.staves if usable(s, c)]
            return [Attack(blade=b, staff=v) for b in bl for v in sv]
        bonus = [""] + [c for c in canonical(s.hand) if CARDS[c].cls in ("blades", "staves") and CARDS[c].value >= 11]
        allies = [""] + ([] if f.no_allies else list(dict.fromkeys(s.allies)))
        return [Support(bonus=b, ally=a) for b in bonus for a in allies]
    hand = canonical(s.hand)
    out += [Develop(card=c) for c in hand if ok(Develop(card=c))]
    out += [Purchase(orb=o) for o in s.orbs if ok(Purchase(orb=o))]
    if "forget" not in s.actions and hand:
        out += [Forget(cards=[c]) for c in hand] + ([Forget(cards=hand)] if len(hand) > 1 else [])
    if ok(Learn()):
        out.append(Learn())
    if "encounter" not in s.actions and s.epics:
        tried = itertools.islice(encounter_choices(s), MAX_ENCOUNTER_TRIES)
        out += list(itertools.islice((e for e in tried if ok(e)), MAX_ENCOUNTER_CHOICES))
    if "recover" not in s.actions:
        out += [Recover(card=c, target=t) for c in hand if CARDS[c].value >= 11 for t in canonical(s.used)
                if ok(Recover(card=c, target=t))]
    out.append(Rest())
    return out


def encounter_choices(s: EState) -> Iterable[Encounter]:
    """Candidate ``encounter`` commands for the next Epic, lazily (``decide`` checks each)."""
    enc = PACK[s.epics[0]]
    p = enc.params
    hand = canonical(s.hand)
    orbs = [o for o in s.orbs if usable(s, o)]
    if enc.require == "nothing":
        yield Encounter()
    elif enc.require == "give":
        yield from (Encounter(cards=list(c)) for c in _subsets(hand, p.get("min_cards", 1), p.get("max_cards", 1)))
    elif enc.require == "use_orbs":
        yield from (Encounter(orbs=list(c)) for c in _subsets(orbs, 1, len(orbs)))
    elif enc.require == "ally":
        yield Encounter()
        yield from (Encounter(cards=[c]) for c in hand)
    else:
        yield Encounter()
        if p.get("deter_give"):
            yield from (Encounter(cards=list(c), deter=True) for c in _subsets(hand, p["deter_give"], p["deter_give"]))
        if p.get("deter_orbs"):
            yield from (Encounter(orbs=list(c), deter=True) for c in _subsets(orbs, 1, len(orbs)))


def default_move(s: EState, seat: int):
    """What a timeout plays (issue 14's default move; E11): REST in a turn; after a look the first
    looked-at card, the rest under the deck in looked-at order; in Combat the smallest card that
    absorbs the rest of the hit (else the largest), the strongest attack, no support."""
    legal = legal_commands(s, seat)
    if not legal:
        return None
    if s.phase == "turn":
        return Rest()
    if s.phase == "look" or s.fight is None:
        return legal[0]
    if s.fight.step == "hit":
        need = s.fight.remaining
        cover = [c for c in legal if worth(c.card) >= need]
        return min(cover, key=lambda c: worth(c.card)) if cover else max(legal, key=lambda c: worth(c.card))
    if s.fight.step == "attack":
        return max(legal, key=lambda a: sum(worth(c) for c in (a.blade, a.staff) if c))
    return Support()


def to_move(s: EState) -> list[int]:
    """The seat the game waits for (always the one player until the end)."""
    return [0] if s.phase not in ("setup", "over") else []


def status(s: EState):
    """The result once the adventure is over: seat 0 wins when the Dragon is defeated."""
    from schemas.envelope import Result

    if s.phase != "over":
        return None
    done = len(s.completed) + (1 if s.aside else 0)
    if s.practice:
        return Result(winners=[0] if s.won else [], scores=[float(done)],
                      summary=f"Practice: Ero {'wins' if s.won else 'loses'} ({s.reason}) on turn {s.turn}.")
    if s.won:
        return Result(winners=[0], scores=[float(done)], summary=f"Ero defeats the Dragon on turn {s.turn}.")
    why = "the Cups could not take a hit" if s.reason == "ero_fell" else "the deck ran out"
    return Result(winners=[], scores=[float(done)],
                  summary=f"Ero's Quest is lost on turn {s.turn} ({why}) after {done} of 21 Encounters.")


def all_cards(s: EState) -> list[str]:
    """Every card of the 80 somewhere in the state (cards-conserved property): play area,
    zones, the Epic piles, the Jester, the unused Gods and a Combat's Epic."""
    return [*s.hand, *s.deck, *s.discard, *s.destroyed, *play_area(s), *s.allies, *s.epics, *s.completed,
            *s.aside, *s.given, *s.under, *s.looking, "e0", *GODS]


assert set(BOSSES) == {"e5", "e6", "e12", "e13", "e15", "e21"}, BOSSES
