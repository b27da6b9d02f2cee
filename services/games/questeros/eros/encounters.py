"""The Ero's Quest Encounter pack: ``content/encounters.toml`` loaded and validated at import,
and the named requirement and reward handlers its entries choose.

Shape: ``PACK[epic id] -> EncounterCard``; each card names one requirement handler
(:data:`REQUIREMENTS`) with its parameters and a list of reward handlers (:data:`REWARDS`).
Raises :class:`~services.kernel.ContentError` naming the file and field for a bad file.
Source: rulebook "Encounters", "Example Encounter", "Combat Example" (the Warlock's and the
Death Knight's texts); every other entry is house content (RULINGS.md "Content packs").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from services.games.questeros.content import read_toml
from services.kernel import ContentError

ENCOUNTER_FILE = Path(__file__).resolve().parent.parent / "content" / "encounters.toml"
CLASSES = ("blades", "staves", "orbs", "cups")

REQUIREMENTS: dict[str, dict[str, type]] = {
    "nothing": {},
    "give": {"min_cards": int, "max_cards": int, "distinct_classes": bool, "classes": list},
    "use_orbs": {"total": int},
    "ally": {"classes": list},
    "combat": {"burn_before": int, "deter_give": int, "deter_orbs": int, "damage_in": list, "no_allies": bool},
}
"""Requirement handlers by name, with the parameters each takes (rules.py applies them):

- ``nothing``: no choice; the rewards follow.
- ``give``: Give ``min_cards``..``max_cards`` cards from the hand (of ``classes`` if set; of
  different Classes if ``distinct_classes``).
- ``use_orbs``: Use Unused Orbs worth ``total`` or more (none of them superfluous).
- ``ally``: place one card of ``classes`` from the hand as an Ally, or decline (no card).
- ``combat``: defeat the Epic in Combat (its value is its damage and its health);
  ``burn_before`` deck cards Destroyed first; ``damage_in`` the Classes that may absorb its hits
  (default Cups); ``no_allies``: no Ally may support; ``deter_give`` / ``deter_orbs``: instead
  of fighting, Give that many hand cards / Use Orbs worth that much.
"""

REWARDS: dict[str, dict[str, type]] = {
    "draw": {"n": int},
    "look": {"n": int},
    "heal": {"n": int},
    "recover_class": {"class": str},
    "recover_all": {},
    "return_discard": {"n": int},
    "shuffle_discard": {},
    "recall_next": {},
}
"""Reward handlers by name, with their parameters:

- ``draw``: draw ``n`` deck cards (gained outside LEARN: a bonus Develop may follow).
- ``look``: look at the top ``n`` deck cards, take one, the rest to the bottom in the player's order.
- ``heal``: the ``n`` highest Used Cups cards become Unused.
- ``recover_class``: every Used card of that Class in the play area becomes Unused.
- ``recover_all``: every Used card becomes Unused.
- ``return_discard``: the ``n`` oldest Discard pile cards go under the deck, oldest first.
- ``shuffle_discard``: the Discard pile is shuffled into the deck (one recorded shuffle).
- ``recall_next``: for each Blades, Staves and Orbs stack, the Discard pile card that is its next
  number (if there) returns to the hand (gained outside LEARN: a bonus Develop may follow).
"""


@dataclass(frozen=True)
class EncounterCard:
    epic: str
    name: str
    text: str
    source: str
    require: str
    params: dict = field(default_factory=dict)
    rewards: tuple[tuple[str, dict], ...] = ()
    pile: str = "completed"


def _check_params(where: str, table: dict, known: dict[str, dict[str, type]]) -> tuple[str, dict]:
    if not isinstance(table, dict):
        raise ContentError(f"{where}: must be a table")
    name = table.get("handler")
    if name not in known:
        raise ContentError(f"{where}.handler: unknown handler {name!r} (known: {sorted(known)})")
    params = {k: v for k, v in table.items() if k != "handler"}
    for k, v in params.items():
        typ = known[name].get(k)
        if typ is None:
            raise ContentError(f"{where}.{k}: {name} takes no parameter {k!r}")
        if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
            raise ContentError(f"{where}.{k}: a {typ.__name__} is required")
        if typ is int and v < 0:
            raise ContentError(f"{where}.{k}: must be >= 0")
        if typ is list and any(c not in CLASSES for c in v):
            raise ContentError(f"{where}.{k}: Classes are {CLASSES}")
        if k == "class" and v not in CLASSES:
            raise ContentError(f"{where}.{k}: must be one of {CLASSES}")
    return name, params


def load_pack(path: Path) -> dict[str, EncounterCard]:
    """Read and validate an Encounter pack: 21 entries, Epics ``e1``..``e21`` in order.

    Raises ContentError naming ``path`` and the failing field.
    """
    fname = path.name
    data = read_toml(path)
    entries = data.get("encounter")
    if not isinstance(entries, list) or len(entries) != 21:
        raise ContentError(f"{fname}: encounter: 21 [[encounter]] tables are required (Epics 1-21)")
    pack: dict[str, EncounterCard] = {}
    for i, e in enumerate(entries):
        where = f"{fname}: encounter[{i}]"
        if not isinstance(e, dict):
            raise ContentError(f"{where}: must be a table")
        for f in ("epic", "name", "text", "source"):
            if not isinstance(e.get(f), str) or not e[f]:
                raise ContentError(f"{where}.{f}: a non-empty string is required")
        if e["epic"] != f"e{i + 1}":
            raise ContentError(f"{where}.epic: expected 'e{i + 1}' (the Epic stack order), not {e['epic']!r}")
        if not (e["source"].startswith("rulebook") or e["source"].startswith("house")):
            raise ContentError(f"{where}.source: must start with 'rulebook' or 'house', not {e['source']!r}")
        req, params = _check_params(f"{where}.require", e.get("require"), REQUIREMENTS)
        rewards = e.get("reward", [])
        if not isinstance(rewards, list):
            raise ContentError(f"{where}.reward: a list of tables is required")
        rw = tuple(_check_params(f"{where}.reward[{j}]", r, REWARDS) for j, r in enumerate(rewards))
        pile = e.get("pile", "completed")
        if pile not in ("completed", "aside"):
            raise ContentError(f"{where}.pile: must be 'completed' or 'aside', not {pile!r}")
        pack[e["epic"]] = EncounterCard(epic=e["epic"], name=e["name"], text=e["text"], source=e["source"],
                                        require=req, params=params, rewards=rw, pile=pile)
    return pack


PACK = load_pack(ENCOUNTER_FILE)
BOSSES = tuple(c.epic for c in PACK.values() if c.require == "combat")
"""The Epics that must be defeated (or deterred): Necromancer, Succubus, Assassin, Death
Knight, Demon, Dragon (rulebook "Solo Objective")."""
