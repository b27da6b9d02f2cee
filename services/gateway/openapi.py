"""The OpenAPI and AsyncAPI documents as client generators need them (docs/gateway.md "Clients").

:func:`client_openapi` rewrites the document Litestar generates:

- **Short stable component names.** A struct of a title's schema module is named
  ``<Title><Class>`` (``schemas.questeros.Bid`` -> ``QuesterosBid``,
  ``schemas.reventure_orbtale.PlayCard`` -> ``ReventureOrbtalePlayCard``; a class already
  named after its title keeps its name: ``QuesterosView``), whether or not
  another title has a class of that name, so adding a title never renames a component; a
  generic envelope is named by its class (``CommandRequest``, ``FeedEntry``,
  ``ViewEnvelope``: each is used with one union only); every other struct keeps its class
  name. Every name is shorter than :data:`MAX_NAME` characters (``ValueError`` otherwise).
- **Tagged unions** (every member an object whose ``type`` is a constant) get a
  ``discriminator`` on ``type`` with the tag-to-component ``mapping``.
- **Error codes**: ``ErrorBody.code`` is an ``enum`` of :data:`~services.gateway.codes.ERROR_CODES`.
- **Command defaults**: every optional field of a command carries its ``default`` (Litestar
  leaves out ``None``, ``[]`` and ``{}``), so that a client fills in a command's every field
  from the document alone, as a seat key signs it (docs/fairness.md "Seat keys").

:func:`asyncapi_document` describes the WebSocket protocol as an AsyncAPI 3.0 document whose
component schemas are the OpenAPI document's (the same names).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import msgspec

from services.gateway.codes import ERROR_CODES
from services.kernel import titles as all_titles

MAX_NAME = 60
"""Every component name (and so every generated type name) is shorter than this."""
REF = "#/components/schemas/"
_GENERIC = re.compile(r"^([A-Za-z0-9]+)_.*\.")  # Litestar's key of Generic[...]: "<Class>_<args with dots>"


def _pascal(snake: str) -> str:
    return "".join(p.capitalize() for p in snake.split("_"))


def _prefixed(title: str, cls: str) -> str:
    """``QuesterosBid``; a class already named after its title keeps its name (``QuesterosView``)."""
    p = _pascal(title)
    return cls if cls.startswith(p) else p + cls


def _title_structs() -> dict[str, list[tuple[str, str]]]:
    """Litestar's possible keys of every title struct reachable from the wire unions ->
    [(title, class name)]: ``Bid``, ``questeros_Bid``, ``schemas_questeros_Bid``."""
    from services.gateway.wire import AnyCommand, AnyEvent, AnyView

    owner: dict[str, str] = {}  # module -> title whose commands, events or view it defines
    for name, t in all_titles().items():
        for c in (*t.command_types, *t.event_types, t.view_type):
            owner.setdefault(c.__module__, name)
    seen: set[type] = set()
    out: dict[str, list[tuple[str, str]]] = {}

    def walk(t: Any) -> None:
        if isinstance(t, msgspec.inspect.StructType):
            if t.cls in seen:
                return
            seen.add(t.cls)
            title, q = owner.get(t.cls.__module__), t.cls.__qualname__
            if title is not None:
                parts = t.cls.__module__.split(".")
                for i in range(len(parts) + 1):
                    out.setdefault("_".join([*parts[i:], q]), []).append((title, q))
            for f in t.fields:
                walk(f.type)
        elif isinstance(t, msgspec.inspect.UnionType):
            for x in t.types:
                walk(x)
        elif isinstance(t, msgspec.inspect.ListType | msgspec.inspect.SetType | msgspec.inspect.FrozenSetType
                        | msgspec.inspect.VarTupleType):
            walk(t.item_type)
        elif isinstance(t, msgspec.inspect.TupleType):
            for x in t.item_types:
                walk(x)
        elif isinstance(t, msgspec.inspect.DictType):
            walk(t.key_type)
            walk(t.value_type)
        elif isinstance(t, msgspec.inspect.Metadata):
            walk(t.type)

    views = list(getattr(AnyView, "__args__", (AnyView,)))  # untagged: not one msgspec union
    for t in msgspec.inspect.multi_type_info([AnyCommand, AnyEvent, *views]):
        walk(t)
    return out


def component_names(keys: list[str]) -> dict[str, str]:
    """Litestar's component keys -> the short stable names (see the module docstring).

    Raises ValueError if two keys get one name or a name is :data:`MAX_NAME` characters or longer.
    """
    structs = _title_structs()
    out: dict[str, str] = {}
    for key in keys:
        name = key
        if m := _GENERIC.match(key):
            name = m.group(1)
        elif len(owners := set(structs.get(key, []))) == 1:
            (title, cls), = owners
            name = _prefixed(title, cls)
        out[key] = name
    names = list(out.values())
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"OpenAPI component names collide: {dup}")
    if long := [n for n in names if len(n) >= MAX_NAME]:
        raise ValueError(f"OpenAPI component names of {MAX_NAME} characters or more: {long}")
    return out


def _walk(node: Any, fn: Any) -> None:
    if isinstance(node, dict):
        fn(node)
        for v in node.values():
            _walk(v, fn)
    elif isinstance(node, list):
        for v in node:
            _walk(v, fn)


def _tag(schemas: dict[str, Any], ref: str) -> str | None:
    s = schemas.get(ref.removeprefix(REF), {})
    t = s.get("properties", {}).get("type", {})
    if "const" in t and "type" in s.get("required", []):
        return t["const"]
    if len(t.get("enum", [])) == 1 and "type" in s.get("required", []):
        return t["enum"][0]
    return None


def _discriminate(schemas: dict[str, Any]) -> Any:
    def fn(node: dict) -> None:
        alts = node.get("oneOf")
        if not isinstance(alts, list) or "discriminator" in node:
            return
        refs = [a for a in alts if set(a) == {"$ref"}]
        rest = [a for a in alts if set(a) != {"$ref"}]
        if len(refs) < 2 or any(r != {"type": "null"} for r in rest):
            return
        tags = [_tag(schemas, r["$ref"]) for r in refs]
        if None in tags or len(set(tags)) != len(tags):
            return
        union = {"oneOf": refs, "discriminator": {"propertyName": "type",
                                                  "mapping": {t: r["$ref"] for t, r in zip(tags, refs, strict=True)}}}
        if rest:  # an optional tagged union: null beside the discriminated union
            node["oneOf"] = [union, {"type": "null"}]
        else:
            node.update(union)
    return fn


def client_openapi(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of Litestar's OpenAPI ``doc`` with short names, discriminators and error codes."""
    doc = copy.deepcopy(doc)
    schemas = doc.get("components", {}).get("schemas", {})
    names = component_names(list(schemas))
    doc["components"]["schemas"] = schemas = {names[k]: v for k, v in sorted(schemas.items(), key=lambda kv: names[kv[0]])}
    for s in schemas.values():  # a generic's title is its long key as well
        if isinstance(s.get("title"), str) and _GENERIC.match(s["title"]):
            s["title"] = _GENERIC.match(s["title"]).group(1)

    def rename(node: dict) -> None:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF):
            node["$ref"] = REF + names.get(ref.removeprefix(REF), ref.removeprefix(REF))

    _walk(doc, rename)
    _walk(doc, _discriminate(schemas))
    _command_defaults(schemas)
    if "ErrorBody" in schemas:
        schemas["ErrorBody"]["properties"]["code"] = {
            "type": "string", "enum": list(ERROR_CODES),
            "description": "Stable error code (docs/gateway.md \"Errors\"; rule rejections: docs/games/*.md)."}
    return doc


def _command_defaults(schemas: dict[str, Any]) -> None:
    """Fill in ``default`` of every optional field of every command of ``CommandRequest``'s union."""
    from services.gateway.wire import AnyCommand

    mapping = schemas.get("CommandRequest", {}).get("properties", {}).get("command", {}).get("discriminator", {}).get("mapping", {})
    union = msgspec.inspect.type_info(AnyCommand)
    for st in getattr(union, "types", (union,)):
        props = schemas.get(mapping.get(st.tag, "").removeprefix(REF), {}).get("properties", {})
        for f in st.fields:
            if f.required or f.encode_name not in props or "default" in props[f.encode_name]:
                continue
            default = f.default_factory() if f.default is msgspec.NODEFAULT else f.default
            props[f.encode_name]["default"] = msgspec.to_builtins(default)


# ---------------------------------------------------------------------------------------------
# AsyncAPI 3.0: the WebSocket protocol


def _msg_schema(cls: Any) -> dict[str, Any]:
    s = msgspec.json.schema(cls)
    s.pop("$defs", None)
    if "$ref" in s:  # msgspec puts a struct under $defs
        comps = msgspec.json.schema_components([cls])[1]  # the struct and those it refers to (a Receipt)
        s = comps[s["$ref"].rsplit("/", 1)[-1]]
    import json  # a struct it refers to (a Receipt) is a component the OpenAPI document shares

    return json.loads(json.dumps(s).replace('"#/$defs/', '"#/components/schemas/'))


def asyncapi_document(openapi: dict[str, Any]) -> dict[str, Any]:
    """The AsyncAPI 3.0 document of the gateway's sockets; schemas shared with ``openapi``
    (a :func:`client_openapi` document). Messages: docs/gateway.md "WebSocket protocol"."""
    from schemas.gateway import WsError, WsOutcome, WsPing

    oschemas = openapi["components"]["schemas"]
    command = copy.deepcopy(oschemas["CommandRequest"]["properties"]["command"])
    version = {"type": "integer", "minimum": 0, "description": "The game's version (events appended so far)."}
    outcome = _msg_schema(WsOutcome)
    outcome["properties"]["code"] = {"oneOf": [{"type": "string", "enum": list(ERROR_CODES)}, {"type": "null"}]}
    error = _msg_schema(WsError)
    error["properties"]["code"] = {"type": "string", "enum": list(ERROR_CODES)}
    schemas: dict[str, Any] = {
        **copy.deepcopy(oschemas),
        "WsFeed": {"type": "object", "required": ["type", "version", "entry"], "properties": {
            "type": {"type": "string", "const": "feed"}, "version": version, "entry": {"$ref": REF + "FeedEntry"}},
            "description": "One feed entry (versions strictly increasing on a socket)."},
        "WsView": {"type": "object", "required": ["type", "version", "view"], "properties": {
            "type": {"type": "string", "const": "view"}, "version": version, "view": {"$ref": REF + "ViewEnvelope"}},
            "description": "The current view at a settled version, after the feed entries up to it."},
        "WsOutcome": outcome,
        "WsError": error,
        "WsPong": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "const": "pong"}}},
        "WsCommand": {"type": "object", "required": ["type", "command"], "additionalProperties": False, "properties": {
            "type": {"type": "string", "const": "command"}, "command": command,
            "command_id": {"oneOf": [{"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,60}$"}, {"type": "null"}]},
            "expected_version": {"oneOf": [{"type": "integer"}, {"type": "null"}]}},
            "description": "Submit a command as the socket's seat (seat sockets only); answered by WsOutcome."},
        "WsPing": {**_msg_schema(WsPing), "additionalProperties": False},
    }
    msgs = {n: {"name": n, "contentType": "application/json", "payload": {"$ref": REF + n},
                "summary": schemas[n].get("description", n)}
            for n in ("WsFeed", "WsView", "WsOutcome", "WsError", "WsPong", "WsCommand", "WsPing")}
    mref = "#/components/messages/"
    server_msgs = {n: {"$ref": mref + n} for n in ("WsFeed", "WsView", "WsOutcome", "WsError", "WsPong")}
    since = {"description": "Resume after this version: the socket sends the feed entries after it, then the view."}
    game_param = {"description": "The game id (1-64 of [A-Za-z0-9_.-])."}
    channels = {
        "seatSocket": {
            "address": "/v1/games/{game_id}/seats/{seat}/ws",
            "title": "A seat's socket (seat token: Authorization header or ?token=)",
            "parameters": {"game_id": game_param, "seat": {"description": "The seat number, from 0."}},
            "messages": {**server_msgs, "WsCommand": {"$ref": mref + "WsCommand"}, "WsPing": {"$ref": mref + "WsPing"}},
            "bindings": {"ws": {"query": {"type": "object", "properties": {
                "since": {"type": "integer", "minimum": 0, **since}, "token": {"type": "string"}}}}},
        },
        "spectatorSocket": {
            "address": "/v1/games/{game_id}/ws",
            "title": "Spectators' socket (no token; commands answered by WsError read_only)",
            "parameters": {"game_id": game_param},
            "messages": {**server_msgs, "WsPing": {"$ref": mref + "WsPing"}},
            "bindings": {"ws": {"query": {"type": "object", "properties": {
                "since": {"type": "integer", "minimum": 0, **since}}}}},
        },
    }
    ops: dict[str, Any] = {}
    for ch, names in (("seatSocket", ("WsCommand", "WsPing")), ("spectatorSocket", ("WsPing",))):
        ops[f"{ch}Receive"] = {"action": "receive", "channel": {"$ref": f"#/channels/{ch}"},
                               "summary": "What the server sends, in version order",
                               "messages": [{"$ref": f"#/channels/{ch}/messages/{n}"} for n in server_msgs]}
        ops[f"{ch}Send"] = {"action": "send", "channel": {"$ref": f"#/channels/{ch}"},
                            "summary": "What a client may send",
                            "messages": [{"$ref": f"#/channels/{ch}/messages/{n}"} for n in names]}
    # AsyncAPI's "receive"/"send" are from the application's side: the document describes a
    # client application (it receives the server's messages and sends commands and pings).
    return {
        "asyncapi": "3.0.0",
        "info": {"title": "Questhall gateway sockets", "version": openapi.get("info", {}).get("version", "1.0.0"),
                 "description": "WebSocket protocol of the Questhall gateway, from a client's side (docs/gateway.md). "
                                "Close codes: 4400 bad since, 4401 token missing/invalid/expired/revoked, 4403 token "
                                "of another game or seat, 4404 no such game, 1009 message too large, 1011 internal error."},
        "defaultContentType": "application/json",
        "channels": channels,
        "operations": ops,
        "components": {"schemas": schemas, "messages": msgs},
    }
