"""The Python SDK as its own distribution (issue 19): ``clients/python`` (``questhall_client``)
imports nothing of the server, its sync facade plays a whole game from the views' legal
commands, its reply shapes and signed messages agree with the server's.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import msgspec
import pytest

import questhall_client
from questhall_client import Gateway, SeatKey, models, receipt_message, seat_message, verify_receipt
from schemas import envelope as server_envelope
from schemas import gateway as server_gateway
from services.kernel.signing import body_hash, verify
from services.kernel.signing import receipt_message as server_receipt_message
from services.kernel.signing import seat_message as server_seat_message

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "clients" / "python" / "questhall_client"
DEPS = {"httpx", "websockets", "msgspec", "anyio", "cryptography"}

# A whole Questeros game through the sync facade, in a process where the server's packages
# cannot be imported; prints what it saw as JSON.
SCRIPT = textwrap.dedent('''
    import importlib.abc, json, random, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("services", "schemas", "tests"):
                raise ModuleNotFoundError(f"blocked: {name}")
            return None

    sys.meta_path.insert(0, Block())
    from questhall_client.sync import Gateway

    rng = random.Random(19)
    with Gateway(sys.argv[1]) as gw:
        g = gw.create("questeros", seats=2)
        seats = [gw.join(g.game_id, f"p{i}", seat=i) for i in range(2)]
        seats[0].start()
        moves, version = 0, g.version
        while True:
            views = [s.view(min_version=version) for s in seats]
            if views[0]["status"] != "active":
                break
            mover = views[0]["to_move"][0]
            out = seats[mover].submit(rng.choice(views[mover]["view"]["legal"]))
            version, moves = out.version, moves + 1
        with seats[0].subscribe(since=0) as sub:
            msg = sub.recv(timeout=30)
            while msg["type"] != "view":
                msg = sub.recv(timeout=30)
        valid, kept = gw.verify_receipts(g.game_id)
        print(json.dumps({"game_id": g.game_id, "status": views[0]["status"], "moves": moves,
                          "valid": valid, "kept": kept, "socket_view": msg["version"], "version": version,
                          "server_modules": sorted(m for m in sys.modules if m.split(".")[0] in ("services", "schemas"))}))
''')


def test_the_package_imports_only_its_dependencies():
    """Every import in clients/python is the standard library, a declared dependency or the package."""
    declared = {d.split(">")[0].split("[")[0] for d in
                __import__("tomllib").loads((PKG.parent / "pyproject.toml").read_text())["project"]["dependencies"]}
    assert declared == DEPS
    for p in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for n in names:
                top = n.split(".")[0]
                assert top in sys.stdlib_module_names or top in DEPS | {"questhall_client", "__future__"}, (p.name, n)


def test_sync_facade_plays_a_whole_game_without_the_server_package(gateway):
    out = subprocess.run([sys.executable, "-c", SCRIPT, gateway.url], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["server_modules"] == []
    assert got["status"] == "finished" and got["moves"] > 4
    assert got["kept"] >= got["moves"] and got["valid"] == got["kept"]  # every kept receipt verifies
    assert got["socket_view"] == got["version"]

    async def audit() -> dict:
        async with Gateway(gateway.url) as gw:
            return await gw.audit(got["game_id"])

    verdict = anyio.run(audit)
    assert verdict["status"] == "valid", verdict


def test_reply_shapes_match_the_servers():
    """Every field of the client's reply Structs exists in the server's Struct of that name, with the same type."""
    server = {**vars(server_gateway), "Result": server_envelope.Result}
    shapes = [c for c in vars(models).values() if isinstance(c, type) and issubclass(c, models.Reply) and c is not models.Reply]
    assert len(shapes) == 8
    for cls in shapes:
        theirs = {f.encode_name: f for f in msgspec.inspect.type_info(server[cls.__name__]).fields}
        for f in msgspec.inspect.type_info(cls).fields:
            assert f.encode_name in theirs, (cls.__name__, f.encode_name)
            assert repr(f.type).replace("questhall_client.models", "") == \
                repr(theirs[f.encode_name].type).replace("schemas.gateway", ""), (cls.__name__, f.encode_name)
            assert f.required == theirs[f.encode_name].required, (cls.__name__, f.encode_name)


def test_signed_messages_are_the_servers():
    key = SeatKey.generate()
    body = {"type": "questeros.bid", "quests": 3, "note": "é\n"}
    msg = seat_message("g-1", 2, 7, body)
    assert msg == server_seat_message("g-1", 2, 7, body_hash(body))
    assert verify(key.public_key, key.sign(msg), msg)
    assert receipt_message("g-1", 7, "ab" * 32) == server_receipt_message("g-1", 7, "ab" * 32)
    assert key.seed_hex() not in repr(key)
    assert not verify_receipt({"game_id": "g", "version": 1, "head_hash": "0" * 64, "key_id": "x", "signature": "0" * 128}, [])


def test_async_client_dict_commands_are_signed_with_their_defaults(gateway):
    """A dict command missing optional fields is signed with the defaults from the OpenAPI document."""

    async def run() -> tuple[dict, int]:
        async with Gateway(gateway.url) as gw:
            defaults = await gw.command_defaults()
            g = await gw.create("fate_deck", 2)
            gm, _p = await gw.join(g.game_id, "GM", seat=0), await gw.join(g.game_id, "P", seat=1)
            await gm.start()
            view = await gm.view(min_version=gm.version)
            out = await gm.submit({"type": "fate_deck.read"}, dry_run=True)  # cards: 3 by default
            assert out.dry_run and out.version == view["version"]
            await gm.submit({"type": "fate_deck.read"})
            return defaults, (await gm.submit({"type": "fate_deck.roll"})).version  # player: None

    defaults, version = anyio.run(run)
    assert defaults["fate_deck.roll"] == {"player": None} and defaults["fate_deck.read"] == {"cards": 3}
    assert defaults["qoc.accept"] == {"respond": [], "to_partner": {}, "special_to_partner": {}}
    assert version >= 3
    assert questhall_client.MAX_RECEIPTS == 10_000


@pytest.mark.parametrize("bad", ["", "zz" * 32, "ab"])
def test_a_bad_seed_is_refused(bad):
    with pytest.raises(ValueError):
        SeatKey(bad)


def test_every_optional_command_field_has_its_default_in_the_openapi():
    from services.gateway.app import openapi_document

    schemas = openapi_document()["components"]["schemas"]
    mapping = schemas["CommandRequest"]["properties"]["command"]["discriminator"]["mapping"]
    missing = [(tag, p) for tag, ref in mapping.items() for p, s in schemas[ref.rsplit("/", 1)[1]]["properties"].items()
               if p not in schemas[ref.rsplit("/", 1)[1]].get("required", []) and "default" not in s]
    assert not missing
