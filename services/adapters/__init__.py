"""Adapters (layer 4): Redis key layout, Lua scripts, event store, command bus, read models."""
