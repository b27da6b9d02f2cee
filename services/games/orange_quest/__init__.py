"""Orange Quest, 2-6 players (rulebooks/orange-quest.txt).

Modules in reading order: ``content`` (the house content pack in ``content/*.toml``), ``state``
(state and shared queries), ``evolve``, ``flow`` (event builder and the day's program),
``signposts`` and ``effects`` (named handlers chosen by the data), ``rules`` (setup, decide,
secret choices, legal commands, deadlines, status), ``views`` (view, redact), ``bots``.
Docs: docs/games/orange_quest.md.
"""

from __future__ import annotations

from schemas import orange_quest as oq
from schemas.base import Command, Event
from services.games.orange_quest import bots, rules, views
from services.games.orange_quest.evolve import evolve
from services.games.orange_quest.state import QState
from services.kernel import register
from services.kernel.modular import ModuleTitle
from services.kernel.secret import SecretChoice


class OrangeQuest(ModuleTitle[QState]):
    """The Orange Quest Decider: decide, view, redact, legal commands, status, to_move and the
    default move come from ``rules`` and ``views``."""

    name = "orange_quest"
    display_name = "Orange Quest"
    rules_version = "1"
    min_seats = 2
    max_seats = 6
    options_type = oq.OrangeQuestOptions
    state_type = QState
    view_type = oq.OrangeQuestView
    command_types = (oq.Play, oq.Pass, oq.Convert, oq.UseAbility, oq.UseEquipment, oq.Challenge, oq.Distribute,
                     oq.Propose, oq.Accept, oq.GiveCandies, oq.GiveCard, oq.PutIn, oq.Throw, oq.Pick)
    event_types = (oq.GameSetUp, oq.Moved, oq.Reshuffled, oq.CoinFlipped, oq.DayStarted, oq.LocationRevealed,
                   oq.SignpostApplied, oq.Stage, oq.HeroTurned, oq.AbilityUsed, oq.EquipmentUsed, oq.CardPlayed,
                   oq.Passed, oq.ChainResolved, oq.Modified, oq.CurseTriggered, oq.CandiesKept, oq.BossRevealed,
                   oq.FightEnded, oq.TrophyTaken, oq.SharingStarted, oq.OthersReward, oq.TreasureStarted,
                   oq.Proposed, oq.ProposalAccepted, oq.AgreementFailed, oq.Chosen, oq.Revealed, oq.PartyStarted,
                   oq.TurnStarted, oq.DuelStarted, oq.DuelEnded, oq.PartyEnded, oq.GameEnded,
                   oq.GivingOpened, oq.CandiesGiven, oq.GivingClosed)
    choice_types = (oq.GiveCard, oq.PutIn, oq.Throw, oq.Pick)
    choice_made_type = oq.Chosen
    choices_revealed_type = oq.Revealed
    off_turn = (oq.Play, oq.UseAbility, oq.UseEquipment)
    timed_decisions = True
    rules_module = rules
    views_module = views
    default_move_text = "pass (a response window, a turn, an agreement, gifts after a duel); else the first legal command"

    def check_options(self, options: oq.OrangeQuestOptions, seats: int) -> None:
        rules.check_options(options, seats)

    def initial_state(self, options: oq.OrangeQuestOptions, seats: int) -> QState:
        return rules.initial_state(options, seats)

    def setup(self, options: oq.OrangeQuestOptions, seats: int, chance) -> list[Event]:
        return rules.setup(options, seats, chance)

    def evolve(self, state: QState, event: Event) -> QState:
        return evolve(state, event)

    def decision_seconds(self, state: QState, seat: int) -> tuple[str, int] | None:
        return rules.decision_seconds(state, seat)

    def secret_choice(self, state: QState) -> SecretChoice | None:
        return rules.secret_choice(state)

    def check_choice(self, state: QState, seat: int, command: Command) -> None:
        rules.check_choice(state, seat, command)

    def resolve_choices(self, state: QState, choices: dict[int, Command], chance) -> list[Event]:
        return rules.resolve_choices(state, choices, chance)


OrangeQuest.bots = {"random": bots.random_bot, "leader": bots.leader_bot}
ORANGE_QUEST = register(OrangeQuest())
