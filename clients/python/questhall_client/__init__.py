"""Python client of a Questhall gateway: async API here, blocking facade in :mod:`questhall_client.sync`.

Talks HTTP and WebSockets to a gateway only; it needs nothing of the server package.
See docs/clients.md.
"""

from questhall_client.client import (
    MAX_RECEIPTS,
    Gateway,
    GatewayError,
    SeatClient,
    Subscription,
    command_body,
    rate_limit_waited,
)
from questhall_client.keys import SeatKey, receipt_message, seat_message, verify, verify_receipt
from questhall_client.models import (
    CommandAccepted,
    GameCreatedReply,
    LobbyGame,
    Receipt,
    Result,
    SeatGrant,
    TitleDetail,
    TitleInfo,
)

__all__ = [
    "MAX_RECEIPTS", "CommandAccepted", "GameCreatedReply", "Gateway", "GatewayError", "LobbyGame", "Receipt",
    "Result", "SeatClient", "SeatGrant", "SeatKey", "Subscription", "TitleDetail", "TitleInfo", "command_body",
    "rate_limit_waited", "receipt_message", "seat_message", "verify", "verify_receipt",
]
