"""The Orange Quest event builder and the day's program (pure; draws only from ``chance``).

:class:`Flow` appends events one by one, folding each into its running state. The day is an
agenda of steps (``evolve.DAY``; the location's signposts and the fight's rewards are inserted):
:meth:`Flow.run` carries out steps until the game waits for input (a phase that takes commands,
an open response window, or a hand over 7 to convert: rulebook "Game Setup", before any other
action), so every command ends by calling ``run`` and the day goes on from where it stopped.

Source: rulebook "Game Process", "Distribution of Rewards", "Night: Party", "End of Game";
RULINGS.md "Orange Quest".
"""

from __future__ import annotations

from schemas.base import Event
from schemas.orange_quest import (
    BossRevealed,
    CandiesKept,
    CoinFlipped,
    CurseTriggered,
    DayStarted,
    FightEnded,
    GameEnded,
    LocationRevealed,
    Moved,
    OthersReward,
    PartyStarted,
    Reshuffled,
    SharingStarted,
    Stage,
    TrophyTaken,
)
from services.games.orange_quest.content import BOSSES, CARDS, LOCATIONS, STRENGTHENING
from services.games.orange_quest.evolve import evolve
from services.games.orange_quest.state import QState, hero_ready, net, order_from, waiting


class Flow:
    """Events built on a running state."""

    def __init__(self, state: QState, chance) -> None:
        self.s = state
        self.chance = chance
        self.events: list[Event] = []

    def emit(self, ev: Event) -> None:
        self.events.append(ev)
        self.s = evolve(self.s, ev)

    # -- verbs ---------------------------------------------------------------------------------
    def coin(self, seat: int, reason: str) -> bool:
        heads = self.chance.coin()
        self.emit(CoinFlipped(seat=seat, heads=heads, reason=reason))
        return heads

    def move(self, frm: str, to: str, cards, reason: str) -> None:
        cards = list(cards)
        if cards:
            self.emit(Moved(frm=frm, to=to, cards=cards, count=len(cards), reason=reason))

    def take_deck(self, n: int, to: str, reason: str) -> list[str]:
        """Move ``n`` cards from the deck top to ``to``; an empty deck takes the shuffled discard
        pile (ruling); with both empty fewer are moved. Returns the cards moved."""
        moved: list[str] = []
        while n > 0:
            if not self.s.deck:
                if not self.s.discard:
                    break
                order = self.chance.shuffle(list(self.s.discard))
                self.emit(Reshuffled(deck=order, count=len(order)))
            k = min(n, len(self.s.deck))
            moved += self.s.deck[:k]
            self.move("deck", to, self.s.deck[:k], reason)
            n -= k
        return moved

    def draw(self, seat: int, n: int, reason: str) -> None:
        self.take_deck(n, f"hand:{seat}", reason)

    def gain(self, seat: int, n: int, reason: str) -> None:
        """``n`` candies: face-down cards from the deck into the stash (rulebook "Candy")."""
        self.take_deck(n, f"stash:{seat}", reason)

    def lose(self, seat: int, n: int, reason: str, protected: bool = True) -> None:
        """``seat`` loses up to ``n`` candies to the discard pile. ``protected``: Joy's ability
        applies (not for a boss loss or a duel: rulebook "6 Hero Cards")."""
        stash = self.s.stashes[seat]
        k = min(n, len(stash))
        if k <= 0:
            return
        if protected and self.s.heroes[seat] == "joy" and hero_ready(self.s, seat):
            self.emit(CandiesKept(seat=seat, count=k))
            return
        self.move(f"stash:{seat}", "discard", self.chance_pick(stash, k), reason)

    def steal_candies(self, thief: int, victim: int, n: int, reason: str, protected: bool = True) -> int:
        stash = self.s.stashes[victim]
        k = min(n, len(stash))
        if k <= 0:
            return 0
        if protected and self.s.heroes[victim] == "joy" and hero_ready(self.s, victim):
            self.emit(CandiesKept(seat=victim, count=k))
            return 0
        self.move(f"stash:{victim}", f"stash:{thief}", self.chance_pick(stash, k), reason)
        return k

    def chance_pick(self, cards, k: int) -> list[str]:
        """``k`` of ``cards`` at random (stash cards are face down: nobody chooses them)."""
        cards = list(cards)
        if k >= len(cards):
            return cards
        idx = sorted(self.chance.shuffle(list(range(len(cards))))[:k])
        return [cards[i] for i in idx]

    def discard_random(self, seat: int, n: int, reason: str) -> None:
        self.move(f"hand:{seat}", "discard", self.chance_pick(self.s.hands[seat], n), reason)

    def trigger_curses(self, trigger: str) -> None:
        """Curses with this trigger act in turn order from the first player, then are discarded."""
        from services.games.orange_quest.effects import curse_effect

        for seat in order_from(self.s, self.s.first):
            for card in self.s.curses[seat]:
                if CARDS[card].trigger == trigger:
                    self.emit(CurseTriggered(seat=seat, card=card))
                    curse_effect(self, seat, card)
                    self.move(f"curse:{seat}", "discard", [card], "curse_triggered")

    # -- the day's program ---------------------------------------------------------------------
    def run(self) -> None:
        """Carry out agenda steps until the game waits for input."""
        from services.games.orange_quest.signposts import SIGNPOSTS

        while not waiting(self.s) and self.s.agenda:
            step = self.s.agenda[0]
            self.emit(Stage(step=step))
            if step in SIGNPOSTS:
                SIGNPOSTS[step](self)
            else:
                getattr(self, f"step_{step}")()
        if not waiting(self.s) and not self.s.agenda and self.s.phase != "over":
            self.end_of_game()  # defensive: an empty agenda ends the journey

    def start_day(self, day: int, first: int) -> None:
        self.emit(DayStarted(day=day, first=first))

    def step_morning(self) -> None:
        """Each player takes 2 cards (turned cards were returned by DayStarted); Bad Dream curses."""
        less = {seat for seat in range(self.s.seats) for c in self.s.curses[seat] if CARDS[c].trigger == "morning"}
        self.trigger_curses("morning")
        for seat in order_from(self.s, self.s.first):
            self.draw(seat, 2 - (seat in less), "morning")

    def step_location(self) -> None:
        loc = self.s.locations[0] if self.s.locations else None
        if loc is None:
            return
        self.emit(LocationRevealed(location=loc, signposts=list(LOCATIONS[loc].signposts)))

    def step_evening(self) -> None:
        """The boss is revealed and the fight begins (Mark and other fight-start curses first)."""
        if not self.s.bosses:
            return
        boss = BOSSES[self.s.bosses[0]]
        health = boss.health // 2 if self.s.seats == 2 and self.s.half_health else boss.health
        side = STRENGTHENING.get(self.s.strengthening)
        health += self.s.rage + (side.health if side else 0)
        self.emit(BossRevealed(boss=boss.id, health=health, turn=self.s.first))
        self.trigger_curses("fight_start")

    def end_fight(self) -> None:
        """The fight is over (everyone passed in a row): who won, leader, participants, others."""
        s = self.s
        c = s.combat
        assert c is not None
        damage = [net(c, i) for i in range(s.seats)]
        won = sum(damage) >= c.health and sum(damage) > 0
        top = max(damage)
        tops = [i for i in range(s.seats) if damage[i] == top and top > 0]
        leader = tops[0] if len(tops) == 1 else None
        participants = [i for i in order_from(s, s.first) if damage[i] > 0 and i != leader]
        others = [i for i in order_from(s, s.first) if damage[i] == 0]
        distributor = leader
        boss = BOSSES[c.boss]
        if won and leader is None and others and boss.others.cards + self._bonus().cards > 0:
            distributor = tops[self.chance.randbelow(len(tops))]  # ruling: at random among the tied
        self.emit(FightEnded(won=won, damage=damage, leader=leader, participants=participants if won else [],
                             others=others if won else [], distributor=distributor if won else None))
        self.move("table", "discard", self.s.table, "fight_over")

    def _bonus(self):
        from services.games.orange_quest.content import Cell

        side = STRENGTHENING.get(self.s.strengthening)
        return side.bonus if side else Cell()

    def step_boss_loss(self) -> None:
        """Lost: every player loses 2 candies (Joy too: rulebook "6 Hero Cards")."""
        for seat in order_from(self.s, self.s.first):
            self.lose(seat, 2, "boss_loss", protected=False)

    def step_leader(self) -> None:
        """The leader's cell and the boss card; on a tie the leader's cell goes to the participants."""
        s = self.s
        boss = BOSSES[s.boss or ""]
        bonus = self._bonus()
        if s.leader is not None:
            self.gain(s.leader, boss.leader.candies + bonus.candies, "leader_reward")
            self.draw(s.leader, boss.leader.cards + bonus.cards, "leader_reward")
            self.emit(TrophyTaken(seat=s.leader, boss=boss.id))
        extra = 0 if s.leader is not None else boss.leader.candies + bonus.candies
        for seat in s.participants:
            self.gain(seat, boss.participants.candies + bonus.candies + extra, "participant_reward")
        for seat in s.others:
            self.gain(seat, boss.others.candies + bonus.candies, "others_reward")

    def step_share(self) -> None:
        """The participants' cards on the table, shared by the game's variant; none when the deck
        and the discard pile are both empty (a sharing of an empty pool waited for picks of nothing)."""
        s = self.s
        boss = BOSSES[s.boss or ""]
        bonus = self._bonus()
        n = boss.participants.cards + bonus.cards
        if s.leader is None:
            n += boss.leader.cards + bonus.cards
        if not s.participants or n <= 0:
            return
        if not self.take_deck(n, "table", "participant_reward"):  # deck and discard pile empty: nothing to share
            return
        if len(s.participants) == 1:
            self.move("table", f"hand:{s.participants[0]}", self.s.table, "participant_reward")
            return
        if s.sharing == "peaceable":
            self.deal_evenly(list(s.participants))
            return
        self.emit(SharingStarted(variant=s.sharing, seats=list(s.participants), pool=list(self.s.table)))

    def deal_evenly(self, seats: list[int]) -> None:
        """Peaceable: the pool dealt evenly at random, the surplus discarded (rulebook "Additional Rules")."""
        pool = self.chance.shuffle(list(self.s.table))
        k = len(pool) // len(seats)
        for i, seat in enumerate(seats):
            self.move("table", f"hand:{seat}", pool[i * k:(i + 1) * k], "shared")
        self.move("table", "discard", pool[k * len(seats):], "surplus")

    def step_others(self) -> None:
        """The others' cards on the table; the leader (or a tied top player) hands them out; none
        when the deck and the discard pile are both empty."""
        s = self.s
        boss = BOSSES[s.boss or ""]
        n = boss.others.cards + self._bonus().cards
        if not s.others or n <= 0:
            return
        if not self.take_deck(n, "table", "others_reward"):  # deck and discard pile empty: nothing to hand out
            return
        if len(s.others) == 1 or s.distributor is None:
            self.move("table", f"hand:{s.others[0]}", self.s.table, "others_reward")
            return
        self.emit(OthersReward(distributor=s.distributor, seats=list(s.others), pool=list(self.s.table)))

    def step_party(self) -> None:
        self.trigger_curses("party_start")
        self.emit(PartyStarted(turn=self.s.first))

    def step_day_end(self) -> None:
        """The day ends: the first player title passes left; after the last day, the finale."""
        if self.s.day >= self.s.days or not self.s.bosses:
            self.end_of_game()
            return
        self.start_day(self.s.day + 1, (self.s.first + 1) % self.s.seats)

    def end_of_game(self) -> None:
        """Hands and equipment into the stashes; candies + boss trophies; shared victory on a tie."""
        for seat in range(self.s.seats):
            self.move(f"hand:{seat}", f"stash:{seat}", self.s.hands[seat], "final_scoring")
            self.move(f"equip:{seat}", f"stash:{seat}", self.s.equipment[seat], "final_scoring")
        scores = [len(self.s.stashes[i]) + sum(BOSSES[b].trophy for b in self.s.trophies[i]) for i in range(self.s.seats)]
        best = max(scores)
        self.emit(GameEnded(scores=scores, winners=[i for i in range(self.s.seats) if scores[i] == best]))
