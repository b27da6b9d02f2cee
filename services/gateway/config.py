"""Gateway configuration, from the environment.

=============================  =====================================================  =========
variable                       meaning                                                default
=============================  =====================================================  =========
``QUESTHALL_TOKEN_KEYS``       comma-separated HMAC keys: the first signs, every one  generated
                               verifies (rotate: prepend the new key, drop the old
                               one once its tokens expired)
``QUESTHALL_ADMIN_TOKEN``      bearer token of the admin endpoints (unset: disabled)  unset
``QUESTHALL_TOKEN_TTL``        seat token lifetime, seconds                           604800
``QUESTHALL_MAX_BODY``         request body limit, bytes                              16384
``QUESTHALL_WS_MAX_MESSAGE``   WebSocket message limit (client to server), bytes      8192
``QUESTHALL_RATE_PER_SEAT``    commands per seat per ``QUESTHALL_RATE_WINDOW``        30
``QUESTHALL_RATE_WINDOW``      rate window, seconds                                   1
``QUESTHALL_COMMAND_TIMEOUT``  seconds a submit waits for the outcome                 10
``QUESTHALL_MAX_IN_FLIGHT``    commands one gateway process waits for at once; a      2000
                               submit beyond it is refused at once with ``503
                               overloaded`` + ``Retry-After`` (socket: close 1013)
``QUESTHALL_REDIS_CONNECTIONS`` the gateway process's Redis connection pool (a         48
                               blocking pool: requests beyond it wait for one)
``QUESTHALL_CORS_ORIGINS``     comma-separated origins allowed by CORS (browser apps   unset
                               on another origin), e.g. ``https://app.example``;
                               ``*`` for any; unset: no CORS headers
=============================  =====================================================  =========
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field


def _keys_from_env() -> tuple[bytes, ...]:
    raw = os.environ.get("QUESTHALL_TOKEN_KEYS", "")
    return tuple(k.strip().encode() for k in raw.split(",") if k.strip())


@dataclass(frozen=True)
class GatewayConfig:
    """Keys and limits of one gateway. ``token_keys[0]`` signs; every key verifies."""

    token_keys: tuple[bytes, ...] = field(default_factory=_keys_from_env)
    admin_token: str | None = field(default_factory=lambda: os.environ.get("QUESTHALL_ADMIN_TOKEN") or None)
    token_ttl: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_TOKEN_TTL", str(7 * 24 * 3600))))
    max_body: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_MAX_BODY", "16384")))
    ws_max_message: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_WS_MAX_MESSAGE", "8192")))
    rate_per_seat: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_RATE_PER_SEAT", "30")))
    rate_window: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_RATE_WINDOW", "1")))
    command_timeout: float = field(default_factory=lambda: float(os.environ.get("QUESTHALL_COMMAND_TIMEOUT", "10")))
    max_in_flight: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_MAX_IN_FLIGHT", "2000")))
    """Commands waited for at once (the bus is saturated when outcomes come slower than commands)."""
    redis_connections: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_REDIS_CONNECTIONS", "48")))
    """Size of the process's Redis pool (sockets and waiting commands hold none)."""
    cors_origins: tuple[str, ...] = field(default_factory=lambda: tuple(
        o.strip() for o in os.environ.get("QUESTHALL_CORS_ORIGINS", "").split(",") if o.strip()))
    """Origins allowed by CORS (``*``: any); empty: no CORS headers are sent."""
    generated_key: bool = False
    """True when no key was configured and a random one was generated at start."""

    def with_keys(self) -> GatewayConfig:
        """This config, or a copy with a freshly generated signing key if none is configured."""
        if self.token_keys:
            return self
        from dataclasses import replace

        return replace(self, token_keys=(secrets.token_urlsafe(32).encode(),), generated_key=True)
