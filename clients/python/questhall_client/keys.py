"""Ed25519 as the gateway uses it: seat keys that sign commands, receipts the deployment signs.

Messages (UTF-8 lines, no trailing newline; docs/fairness.md "Receipts", "Seat keys"):

- seat command: ``questhall-seat/1``, game id, seat, version (the command's ``expected_version``),
  hex SHA-256 of the canonical JSON (sorted keys, no whitespace) of the command body with every
  field, defaults included;
- receipt: ``questhall-receipt/1``, game id, version, head hash.

Keys travel as 64 hex digits (raw 32-byte public key or private seed), signatures as 128.
This is the client's own implementation of the published format (the server's is
``services/kernel/signing.py``; a test checks that both give the same bytes).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_HEX128 = re.compile(r"[0-9a-f]{128}\Z")


def canonical_json(value: Any) -> bytes:
    """Sorted-key JSON without whitespace (UTF-8) of builtins: what the server hashes."""
    return msgspec.json.encode(value, order="sorted")


def seat_message(game_id: str, seat: int, version: int, body: dict) -> bytes:
    """The bytes a seat signs for ``body`` (a full command body as builtins) at ``version``."""
    digest = hashlib.sha256(canonical_json(body)).hexdigest()
    return f"questhall-seat/1\n{game_id}\n{seat}\n{version}\n{digest}".encode()


def receipt_message(game_id: str, version: int, head_hash: str) -> bytes:
    """The bytes a receipt signs."""
    return f"questhall-receipt/1\n{game_id}\n{version}\n{head_hash}".encode()


def verify(public_key_hex: str, signature_hex: str, message: bytes) -> bool:
    """True if ``signature_hex`` is the key's valid Ed25519 signature of ``message`` (never raises)."""
    if not _HEX64.match(public_key_hex or "") or not _HEX128.match(signature_hex or ""):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(bytes.fromhex(signature_hex), message)
    except (InvalidSignature, ValueError):
        return False
    return True


def verify_receipt(receipt: dict, keys: list[dict]) -> bool:
    """True if ``receipt`` (a dict from an answer) is signed by the key of its ``key_id`` in
    ``keys`` (``GET /v1/keys``'s ``receipt_keys``: ``{key_id, public_key, alg}``)."""
    key = next((k for k in keys if k.get("key_id") == receipt.get("key_id")), None)
    if key is None or key.get("alg", "Ed25519") != "Ed25519":
        return False
    try:
        msg = receipt_message(receipt["game_id"], int(receipt["version"]), receipt["head_hash"])
    except (KeyError, TypeError, ValueError):
        return False
    return verify(key["public_key"], receipt.get("signature", ""), msg)


class SeatKey:
    """A seat's Ed25519 private key: ``SeatKey(seed_hex)`` or :meth:`generate`.

    ``public_key``: 64 hex digits; ``sign(message) -> hex``. Raises ValueError for a seed that
    is not 64 hex digits. The seed is a secret: ``repr`` never shows it.
    """

    def __init__(self, seed_hex: str) -> None:
        seed_hex = seed_hex.strip().lower()
        if not _HEX64.match(seed_hex):
            raise ValueError("an Ed25519 private key is 64 hex digits (its 32-byte seed)")
        self._key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
        self.public_key = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    @classmethod
    def generate(cls) -> SeatKey:
        """A fresh key from the OS CSPRNG."""
        return cls(Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()).hex())

    def sign(self, message: bytes) -> str:
        """The 128-hex-digit signature of ``message``."""
        return self._key.sign(message).hex()

    def seed_hex(self) -> str:
        """The private seed (64 hex digits), for storing the key; never log it."""
        return self._key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()).hex()

    def __repr__(self) -> str:
        return f"SeatKey(public_key={self.public_key[:16]!r}...)"
