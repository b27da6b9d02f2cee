"""Questhall wire contract: envelopes, lifecycle and per-title commands, events and views.

Layer 1 of ../shared/DESIGN.md: imports nothing of ours.
"""

from schemas.base import Command, Event, Options, Record
from schemas.envelope import (
    AbandonGame,
    Accepted,
    CommandEnvelope,
    CreateGame,
    EventEnvelope,
    FeedEntry,
    GameAbandoned,
    GameCreated,
    GameFinished,
    GameStarted,
    JoinSeat,
    LeaveSeat,
    Outcome,
    Rejected,
    Result,
    SeatInfo,
    SeatJoined,
    SeatLeft,
    SeedRevealed,
    StartGame,
    ViewEnvelope,
)

__all__ = [
    "AbandonGame", "Accepted", "Command", "CommandEnvelope", "CreateGame", "Event",
    "EventEnvelope", "FeedEntry", "GameAbandoned", "GameCreated", "GameFinished", "GameStarted",
    "JoinSeat", "LeaveSeat", "Options", "Outcome", "Record", "Rejected", "Result", "SeatInfo",
    "SeatJoined", "SeatLeft", "SeedRevealed", "StartGame", "ViewEnvelope",
]
