"""Gateway configuration, from the environment.

=============================  =====================================================  =========
variable                       meaning                                                default
=============================  =====================================================  =========
``QUESTHALL_TOKEN_KEYS``       comma-separated HMAC keys: the first signs, every one  generated
                               verifies (rotate: prepend the new key, drop the old
                               one once its tokens expired)
``QUESTHALL_RECEIPT_KEYS``     comma-separated Ed25519 private keys (64 hex digits    generated
                               each): the first signs receipts, every one is
                               published at ``/v1/keys`` (rotate like token keys)
``QUESTHALL_ADMIN_TOKEN``      bearer token of the admin endpoints (unset: disabled)  unset
``QUESTHALL_TOKEN_TTL``        seat token lifetime, seconds                           604800
``QUESTHALL_MAX_BODY``         request body limit, bytes                              16384
``QUESTHALL_WS_MAX_MESSAGE``   WebSocket message limit (client to server), bytes      8192
``QUESTHALL_RATE_PER_SEAT``    commands per seat per ``QUESTHALL_RATE_WINDOW``        30
``QUESTHALL_RATE_WINDOW``      rate window, seconds                                   1
``QUESTHALL_COMMAND_TIMEOUT``  seconds a submit waits for the outcome                 10
``QUESTHALL_MAX_IN_FLIGHT``    submits one gateway process handles at once (from     2000
                               their rate check to their outcome); a
                               submit beyond it is refused at once with ``503
                               overloaded`` + ``Retry-After`` (socket: close 1013)
``QUESTHALL_REDIS_CONNECTIONS`` the gateway process's Redis connection pool (a         48
                               blocking pool: requests beyond it wait for one)
``QUESTHALL_ADMIT_CREATES``    creates per client address per minute (429)            30
``QUESTHALL_ADMIT_JOINS``      joins per client address per minute (429)              60
``QUESTHALL_ADMIT_STARTS``     starts per seat token per minute (429)                 10
``QUESTHALL_AUDIT_RATE``       public audits per client address per minute (429)      10
``QUESTHALL_WS_PER_ADDRESS``   open sockets per client address (close 4429)           200
``QUESTHALL_WS_MAX``           open sockets per gateway process (close 4429)          10000
``QUESTHALL_READ_WAIT``        seconds a read with ``min_version`` waits (504)        5
``QUESTHALL_READ_RATE``        reads (GET under ``/v1``, a socket's first read from   100
                               Redis) per client address per second, token bucket
                               in this process (429 ``rate_limited``, socket 4429)
``QUESTHALL_READ_BURST``       the bucket's size: reads at once after a pause         200
``QUESTHALL_READS_IN_FLIGHT``  reads of one client address being answered at once,   16
                               a read waiting for ``min_version`` included (429)
``QUESTHALL_FORWARDED_ALLOW_IPS`` proxies whose ``X-Forwarded-For`` names the client   unset
                               (comma-separated IPs, ``*`` any); unset: the header is
                               ignored and limits key on the peer address
``QUESTHALL_CORS_ORIGINS``     comma-separated origins allowed by CORS (browser apps   unset
                               on another origin), e.g. ``https://app.example``;
                               ``*`` for any; unset: no CORS headers
=============================  =====================================================  =========
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


def _receipt_keys_from_env() -> tuple[str, ...]:
    raw = os.environ.get("QUESTHALL_RECEIPT_KEYS", "")
    return tuple(k.strip().lower() for k in raw.split(",") if k.strip())


def _keys_from_env() -> tuple[bytes, ...]:
    raw = os.environ.get("QUESTHALL_TOKEN_KEYS", "")
    return tuple(k.strip().encode() for k in raw.split(",") if k.strip())


MIN_LOCAL_TOKEN_KEY = 32
"""Characters of a kept local token key at least (``secrets.token_urlsafe(32)`` makes 43)."""


class _KeysFileError(ValueError):
    """A local keys file whose JSON holds a key of the wrong kind; the message names the field, never its value."""


def _read_local_keys(path: Path) -> tuple[str, str, bool]:
    """``(token_key, receipt_key, loose)`` from the local keys file at ``path``; ``loose``: its mode
    lets group or others in (``& 0o077``). Raises FileNotFoundError if there is none (a dangling
    symlink too), another OSError if it cannot be read, ValueError (bad JSON, or
    :class:`_KeysFileError` naming the field of the wrong kind), KeyError or TypeError if it holds
    no such keys."""
    from services.kernel.signing import SigningKey

    with path.open() as f:
        loose = bool(os.fstat(f.fileno()).st_mode & 0o077)
        kept = json.loads(f.read())
    token, receipt = kept["token_key"], kept["receipt_key"]
    if not isinstance(token, str) or len(token) < MIN_LOCAL_TOKEN_KEY:
        raise _KeysFileError(f"token_key is not a string of at least {MIN_LOCAL_TOKEN_KEY} characters")
    try:
        SigningKey(receipt)
    except (ValueError, AttributeError):  # AttributeError: not a string
        raise _KeysFileError("receipt_key is not 64 hex digits") from None
    return token, receipt.strip().lower(), loose


def _make_local_keys(path: Path) -> tuple[str, str]:
    """New ``(token_key, receipt_key)``, written whole to a temporary file (mode 0600) beside
    ``path`` and hard-linked to ``path``, so the file appears complete or not at all. Raises
    FileExistsError if ``path`` exists by then (another start's file, or a dangling symlink: the
    existing one wins), another OSError if it cannot be written."""
    from services.kernel.signing import SigningKey

    token, receipt = secrets.token_urlsafe(32), SigningKey.generate().seed_hex()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"token_key": token, "receipt_key": receipt}) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return token, receipt


@dataclass(frozen=True)
class GatewayConfig:
    """Keys and limits of one gateway. ``token_keys[0]`` signs; every key verifies."""

    token_keys: tuple[bytes, ...] = field(default_factory=_keys_from_env)
    receipt_keys: tuple[str, ...] = field(default_factory=_receipt_keys_from_env)
    """Ed25519 private keys (hex seeds); the first signs receipts."""
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
    pool_wait: float = field(default_factory=lambda: float(os.environ.get("QUESTHALL_POOL_WAIT", "1.0")))
    """Seconds a request waits for a free pool connection before it is answered 503 ``overloaded``
    with ``Retry-After`` (a socket: close 1013)."""
    admit_creates: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_ADMIT_CREATES", "30")))
    admit_joins: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_ADMIT_JOINS", "60")))
    admit_starts: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_ADMIT_STARTS", "10")))
    audit_rate: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_AUDIT_RATE", "10")))
    ws_per_address: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_WS_PER_ADDRESS", "200")))
    ws_max: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_WS_MAX", "10000")))
    read_wait: float = field(default_factory=lambda: float(os.environ.get("QUESTHALL_READ_WAIT", "5")))
    read_rate: float = field(default_factory=lambda: float(os.environ.get("QUESTHALL_READ_RATE", "100")))
    """Reads per client address per second (a token bucket per process; <= 0: no limit)."""
    read_burst: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_READ_BURST", "200")))
    """The read bucket's size (reads admitted at once after a pause)."""
    reads_in_flight: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_READS_IN_FLIGHT", "16")))
    """Reads of one client address answered at once, waits for ``min_version`` included (<= 0: no cap)."""
    cors_origins: tuple[str, ...] = field(default_factory=lambda: tuple(
        o.strip() for o in os.environ.get("QUESTHALL_CORS_ORIGINS", "").split(",") if o.strip()))
    """Origins allowed by CORS (``*``: any); empty: no CORS headers are sent."""
    generated_key: bool = False
    """True when no token key was configured and a random one was generated at start."""
    generated_receipt_key: bool = False
    """True when no receipt key was configured and a random one was generated at start."""

    def with_keys(self) -> GatewayConfig:
        """This config, or a copy with freshly generated token and receipt keys where none is configured."""
        from dataclasses import replace

        from services.kernel.signing import SigningKey

        out = self
        if not out.token_keys:
            out = replace(out, token_keys=(secrets.token_urlsafe(32).encode(),), generated_key=True)
        if not out.receipt_keys:
            out = replace(out, receipt_keys=(SigningKey.generate().seed_hex(),), generated_receipt_key=True)
        return out

    def with_local_keys(self, path: Path) -> tuple[GatewayConfig, bool, bool]:
        """For ``questhall serve`` (a local run): this config with the keys kept in ``path`` where
        none is configured, whether any was taken from it, and whether the file's mode lets its
        group or others read it (``mode & 0o077``: :meth:`local_keys_warning` says to ``chmod 600``).

        The file (JSON ``{"token_key", "receipt_key"}``, mode 0600) is made on the first run, so
        seat tokens and receipts outlive a restart as the games do (they stopped working at every
        restart: a newcomer's finding). It is written whole to a temporary file beside it and
        linked into place, so a start never reads half a file and, of two first starts at once,
        the one that links first wins and the other reads its keys. ``token_key`` is a string of
        at least 32 characters; ``receipt_key`` 64 hex digits (:class:`SigningKey`).
        Raises ValueError naming the file (never a key) if it holds no such keys or cannot be
        read or made (a dangling symlink too): delete it to start over."""
        from dataclasses import replace

        if self.token_keys and self.receipt_keys:
            return self, False, False
        try:
            try:
                token, receipt, loose = _read_local_keys(path)
            except FileNotFoundError:
                try:
                    (token, receipt), loose = _make_local_keys(path), False
                except FileExistsError:  # another start linked its file first, or a dangling symlink
                    token, receipt, loose = _read_local_keys(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            why = str(exc) if isinstance(exc, _KeysFileError) else type(exc).__name__
            if path.is_symlink() and not path.exists():
                why = "a symlink to a missing file"
            raise ValueError(f"{path} does not hold the local gateway keys ({why}); "
                             "delete it and start again (new keys: earlier seat tokens stop working).") from None
        out = self
        if not out.token_keys:
            out = replace(out, token_keys=(token.encode(),))
        if not out.receipt_keys:
            out = replace(out, receipt_keys=(receipt,))
        return out, True, loose

    @staticmethod
    def local_keys_line(path: Path) -> str:
        """The plain sentence of a local run whose keys come from ``path`` (:meth:`with_local_keys`),
        beside :meth:`generated_keys_line`; names the file and the variables, never a key."""
        return (f"Seat tokens and receipts are signed with the local keys in {path} (made on the first serve, kept "
                "across restarts, deleted by make clean); a deployment sets QUESTHALL_TOKEN_KEYS and "
                "QUESTHALL_RECEIPT_KEYS (docs/operations.md, \"Gateway keys\").")

    @staticmethod
    def local_keys_warning(path: Path) -> str:
        """The one-line warning of a local keys file that its group or others may read (the third
        value of :meth:`with_local_keys`); names the file and the fix, never a key."""
        return f"Warning: {path} can be read by other users (its keys sign seat tokens and receipts): chmod 600 {path}"

    def generated_key_variables(self) -> list[str]:
        """The variables whose keys :meth:`with_keys` made at random (``QUESTHALL_TOKEN_KEYS``,
        ``QUESTHALL_RECEIPT_KEYS``, in that order): the ones not set."""
        return [n for n, gen in (("QUESTHALL_TOKEN_KEYS", self.generated_key),
                                 ("QUESTHALL_RECEIPT_KEYS", self.generated_receipt_key)) if gen]

    def generated_keys_line(self) -> str | None:
        """One plain sentence for a local run (``make serve``, ``make demo``) saying which keys were
        made at start and that nothing needs doing there, or None when every key was configured.
        Names the variables, never a key. A deployment's gateway logs the two structured warnings
        instead (docs/operations.md, "Gateway keys")."""
        made = self.generated_key_variables()
        if not made:
            return None
        return (f"Seat tokens and receipts are signed with keys made for this run ({' and '.join(made)} not set): "
                "they hold while it runs; nothing to do locally, a deployment sets them (docs/operations.md, "
                "\"Gateway keys\").")
