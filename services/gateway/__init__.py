"""The gateway: HTTP + WebSocket API for chat bots and mobile clients (layer 5).

Clients never talk to Redis; the gateway authenticates the seat (signed tokens), stamps seat,
player and command id, submits through the command bus and serves the read models. No game
rule lives here. See docs/gateway.md.
"""

from services.gateway.app import create_app
from services.gateway.config import GatewayConfig

__all__ = ["GatewayConfig", "create_app"]
