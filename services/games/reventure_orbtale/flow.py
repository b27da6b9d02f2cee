"""The Orbtale event builder and the chapter sequence (pure; draws only from ``chance``).

:class:`Flow` appends events one by one, folding each into its running state, and checks the
winning conditions after every one ("you'll instantly win if you own all 4 orbs"): once a
``game_won`` is appended it raises :class:`GameOver`, which the callers catch, so nothing
happens after a win. Helpers here are the rulebook's verbs (draw, discard, damage, heal, steal,
eliminate) and the phases that need no input (chapter start with exploration, end of chapter).

Source: rulebook "Game sequence" and "FAQ"; RULINGS.md "Reventure: Orbtale".
"""

from __future__ import annotations

from contextlib import contextmanager

from schemas.base import Event
from schemas.reventure_orbtale import (
    CardsDiscarded,
    CardsDrawn,
    CardsStolen,
    ChapterDecksShuffled,
    ChapterEnded,
    ChapterRuleApplied,
    ChapterStarted,
    DamageDealt,
    DeckReshuffled,
    GameWon,
    Healed,
    HeroEliminated,
    HeroReincarnated,
    ReincarnationPending,
    SkillsAttached,
)
from services.games.reventure_orbtale.content import CARDS, HEROES
from services.games.reventure_orbtale.evolve import evolve
from services.games.reventure_orbtale.state import (
    MAX_HEALTH,
    ORBS,
    OState,
    in_play,
    orbs_owned,
    playing,
    skills,
    turn_order,
)


class GameOver(Exception):
    """Raised by :meth:`Flow.emit` right after a ``game_won`` event."""


class Flow:
    """Events built on a running state: ``emit`` folds and checks the winning conditions."""

    def __init__(self, state: OState, chance) -> None:
        self.s = state
        self.chance = chance
        self.events: list[Event] = []
        self._hold = 0

    def emit(self, ev: Event) -> None:
        self.events.append(ev)
        self.s = evolve(self.s, ev)
        if not self._hold and not isinstance(ev, GameWon):
            self.check()

    @contextmanager
    def at_once(self):
        """Events that happen together (a double elimination): winning is checked after them."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1
        if not self._hold:
            self.check()

    def check(self) -> None:
        """Append ``game_won`` and raise GameOver if a winning condition holds now."""
        s = self.s
        if s.phase in ("setup", "over"):
            return
        for seat in range(s.seats):
            if orbs_owned(s, seat) == len(ORBS):
                self.emit(GameWon(winners=[seat], reason="four_orbs"))
                raise GameOver
        left = [i for i in range(s.seats) if not s.players[i].out]
        if len(left) <= 1:
            self.emit(GameWon(winners=left, reason="last_hero" if left else "no_hero_left"))
            raise GameOver

    # -- verbs ---------------------------------------------------------------------------------
    def draw(self, seat: int, n: int, reason: str) -> None:
        """Draw ``n`` cards into ``seat``'s inventory, reshuffling the discard pile whenever the
        deck runs out (2021 update); with both empty, fewer are drawn (ruling)."""
        while n > 0:
            if not self.s.deck:
                if not self.s.discard:
                    return
                order = self.chance.shuffle(list(self.s.discard))
                self.emit(DeckReshuffled(deck=order, count=len(order)))
            k = min(n, len(self.s.deck))
            self.emit(CardsDrawn(seat=seat, cards=list(self.s.deck[:k]), count=k, reason=reason))
            n -= k

    def discard(self, seat: int, cards: list[str], source: str, reason: str) -> None:
        if cards:
            self.emit(CardsDiscarded(seat=seat, cards=cards, source=source, reason=reason))  # type: ignore[arg-type]

    def discard_random(self, seat: int, n: int, reason: str) -> None:
        inv = list(self.s.players[seat].inventory)
        pick = [inv[i] for i in sorted(self._sample(len(inv), n))]
        self.discard(seat, pick, "inventory", reason)

    def _sample(self, size: int, n: int) -> list[int]:
        if size == 0 or n <= 0:
            return []
        return self.chance.shuffle(list(range(size)))[:n]

    def steal(self, thief: int, victim: int, n: int, source: str, reason: str) -> None:
        """``thief`` takes ``n`` random cards of ``victim``'s ``source`` into its inventory."""
        pool = list(getattr(self.s.players[victim], source))
        cards = [pool[i] for i in sorted(self._sample(len(pool), n))]
        if cards:
            self.emit(CardsStolen(thief=thief, victim=victim, cards=cards, count=len(cards), source=source,  # type: ignore[arg-type]
                                  reason=reason))

    def damage(self, seat: int, amount: int, reason: str) -> None:
        p = self.s.players[seat]
        if amount > 0 and in_play(self.s, seat) and p.health > 0:
            self.emit(DamageDealt(seat=seat, amount=amount, health=max(0, p.health - amount), reason=reason))

    def heal(self, seat: int, amount: int, reason: str) -> None:
        p = self.s.players[seat]
        if amount > 0 and in_play(self.s, seat) and 0 < p.health < MAX_HEALTH:
            new = min(MAX_HEALTH, p.health + amount)
            self.emit(Healed(seat=seat, amount=new - p.health, health=new, reason=reason))

    def eliminate(self, seats: list[int], winner: int | None) -> None:
        """Heroes at 0 health leave play (rulebook "Combat rules" 3 and FAQ).

        Each puts every card, active orbs included, into its inventory. A single elimination by
        a ``winner`` that survives: the winner steals up to 3 at random (the Bandit 4; ruling:
        the inventory is face down, so the steal is blind) and The Mimic absorbs the hero's
        skills. A player with no hero left then discards everything (orbs to the deck top).
        """
        if not seats:
            return
        with self.at_once():
            for seat in seats:
                p = self.s.players[seat]
                self.emit(HeroEliminated(seat=seat, hero=p.hero or "", reserve=len(p.reserve)))
            if winner is not None and len(seats) == 1 and winner not in seats and in_play(self.s, winner):
                loser = seats[0]
                gone = self.events[-1].hero  # type: ignore[attr-defined]
                self.steal(winner, loser, 4 if "plunder" in skills(self.s, winner) else 3, "inventory", "elimination")
                if "mimic" in skills(self.s, winner) and gone:
                    mimic = self.s.players[winner].hero or ""
                    have = list(dict(self.s.attached).get(mimic, ()))
                    new = [HEROES[gone].skill, *dict(self.s.attached).get(gone, ())]
                    merged = have + [k for k in new if k not in have and k != HEROES[mimic].skill]
                    if merged != have:
                        self.emit(SkillsAttached(hero=mimic, skills=merged))
            for seat in seats:
                if self.s.players[seat].out:
                    self.discard(seat, list(self.s.players[seat].inventory), "inventory", "no_hero_left")

    # -- phases without input ------------------------------------------------------------------
    def start_chapter(self) -> None:
        """Chapter start (reveal a card of each chapter deck; a spent deck is reshuffled, ruling),
        then exploration: 2 cards each (the Explorer 3) in turn order from the token holder."""
        s = self.s
        for i in (0, 1):
            if not s.chapter_decks[i]:
                order = self.chance.shuffle(sorted(s.chapter_piles[i]))
                self.emit(ChapterDecksShuffled(deck=i, order=order, count=len(order)))
                s = self.s
        self.emit(ChapterStarted(chapter=s.chapter + 1, who=s.chapter_decks[0][0], what=s.chapter_decks[1][0]))
        for seat in playing(self.s):
            self.draw(seat, 3 if "scout" in skills(self.s, seat) else 2, "exploration")

    def end_chapter(self) -> None:
        """End of chapter: the chapter rule, active orbs and end-of-chapter skills in turn order,
        then reincarnation (a secret choice when a seat has two reserve heroes)."""
        from services.games.reventure_orbtale.effects import BONUS_AT_CHAPTER_END, WHAT, WHO

        s = self.s
        if s.rule is not None:
            who, what = s.rule
            hit = WHO[who](s)
            self.emit(ChapterRuleApplied(chapter=s.chapter, who=who, what=what, seats=hit))
            for seat in hit:
                WHAT[what](self, seat)
            self.eliminate([seat for seat in hit if self._dead(seat)], None)  # together (ruling)
        for seat in turn_order(self.s):
            for orb in self.s.players[seat].active:
                fn = BONUS_AT_CHAPTER_END.get(CARDS[orb].bonus)
                if fn is not None:
                    fn(self, seat, orb)
            if "meditate" in skills(self.s, seat):
                self.heal(seat, 1, "meditate")
        pending = []
        for seat in turn_order(self.s):
            p = self.s.players[seat]
            if p.defeated and not p.out and len(p.reserve) == 1:
                self.emit(HeroReincarnated(seat=seat, hero=p.reserve[0], health=MAX_HEALTH))
            elif p.defeated and not p.out and p.reserve:
                pending.append(seat)
        if pending:
            self.emit(ReincarnationPending(seats=sorted(pending)))
            return
        self.next_chapter()

    def next_chapter(self) -> None:
        """Hands into inventories, the token to the next seat still in the game, next chapter
        (or the house chapter limit)."""
        s = self.s
        nxt = next((x for x in turn_order(s)[1:] if not s.players[x].out), s.token)
        self.emit(ChapterEnded(chapter=s.chapter, token=nxt))
        if self.s.chapter >= self.s.chapter_limit:
            self.emit(GameWon(winners=limit_winners(self.s), reason="chapter_limit"))
            raise GameOver
        self.start_chapter()

    def _dead(self, seat: int) -> bool:
        p = self.s.players[seat]
        return in_play(self.s, seat) and p.health <= 0


def limit_winners(s: OState) -> list[int]:
    """House chapter limit: most orbs owned, then most health, among seats still in the game."""
    left = [i for i in range(s.seats) if not s.players[i].out]
    key = {i: (orbs_owned(s, i), s.players[i].health if in_play(s, i) else 0) for i in left}
    best = max(key.values(), default=None)
    return [i for i in left if key[i] == best]
