"""The pure kernel: Decider protocol, lifecycle, fold/replay, errors, chance, hashing.

No I/O, no Redis, no clock (../shared/DESIGN.md layer 2).
"""

from services.kernel.chance import (
    RNG_ALGORITHM,
    Chance,
    ScriptedChance,
    SeededChance,
    derive_key,
    seed_commitment,
)
from services.kernel.decider import Bot, Title
from services.kernel.errors import ContentError, CorruptEvent, Rejection
from services.kernel.game import Game, chance_for, decide, evolve, fold, new_game, redact, view
from services.kernel.registry import codec, get_title, register, titles

__all__ = [
    "RNG_ALGORITHM", "Bot", "Chance", "ContentError", "CorruptEvent", "Game", "Rejection",
    "ScriptedChance", "SeededChance", "Title", "chance_for", "codec", "decide", "derive_key",
    "evolve", "fold", "get_title", "new_game", "redact", "register", "seed_commitment",
    "titles", "view",
]
