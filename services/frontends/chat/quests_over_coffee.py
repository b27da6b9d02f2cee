"""Chat grammar of Quests Over Coffee: ``quest spilled-beans``, ``roll``, ``reroll 1 3``, ``accept``.

Dice are numbered from 1 in the chat (``view.dice`` index + 1).
"""

from __future__ import annotations

from typing import Any

from schemas.base import Command
from schemas.quests_over_coffee import (
    Accept,
    Buy,
    ChooseDice,
    ChooseQuest,
    ChooseShopOrder,
    GiveItem,
    KeepItem,
    LeaveShop,
    PayForHelp,
    Reroll,
    Roll,
    SwapEnvironment,
    SwapItem,
    Trade,
    UseItem,
)
from services.frontends.chat.common import ChatError, integer, short

HELP = """Quests Over Coffee (dice are numbered from 1):
  keep ITEM                 keep one of your two starting items
  quest ID                  take on a face-up quest
  pay N [companion]         pay for N help dice (and draw a companion)
  roll                      the base roll
  pick A B P                co-op: your dice A and B and your partner's die P
  reroll D... [payer SEAT]  reroll dice with Luck
  use ITEM [die D]          use an item (on die D)
  give ITEM [for ITEM]      co-op: give an item to your partner (or swap it for one of theirs)
  accept [respond ITEM,...] [partner health=N luck=N item=N] [special health=N luck=N item=N]
                            accept the roll (co-op: the partner's share of the Fail/Success
                            event, then of the Special event)
  order SEAT | buy SLOT | trade ITEM | swap | leave      at the Shop"""

SIMPLE = {"roll": Roll, "swap": SwapEnvironment, "leave": LeaveShop}
WORDS = ("keep", "quest", "pay", "roll", "pick", "reroll", "use", "give", "accept", "order", "buy", "trade", "swap", "leave")
"""The first words a chat line may start with (``choose`` is ``quest``), named to an unknown word."""


def _die(word: str) -> int:
    return integer(word, "A die", 1, 12) - 1


def _one(rest: list[str], usage: str) -> str:
    if len(rest) != 1:
        raise ChatError(f"Write `{usage}`.")
    return rest[0]


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """A Quests Over Coffee command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head in SIMPLE:
        if rest:
            raise ChatError(f"`{head}` takes nothing after it.")
        return SIMPLE[head]()
    if head == "keep":
        return KeepItem(item=_one(rest, "keep ITEM"))
    if head in ("quest", "choose"):
        return ChooseQuest(quest=_one(rest, "quest ID"))
    if head == "pay":
        companion = "companion" in rest
        nums = [w for w in rest if w != "companion"]
        return PayForHelp(dice=integer(nums[0], "Help dice", 0, 3) if nums else 1, companion=companion)
    if head == "pick":
        if len(rest) != 3:
            raise ChatError("Write `pick A B P`: two of your dice and one of your partner's.")
        return ChooseDice(leader=[integer(rest[0], "A die", 1, 3) - 1, integer(rest[1], "A die", 1, 3) - 1],
                          partner=integer(rest[2], "A die", 1, 3) - 1)
    if head == "reroll":
        payer = None
        if "payer" in rest:
            i = rest.index("payer")
            if i + 1 >= len(rest):
                raise ChatError("Write `payer SEAT` after the dice.")
            payer = integer(rest[i + 1], "A seat", 0, 1)
            rest = rest[:i] + rest[i + 2:]
        if not rest:
            raise ChatError("Write `reroll D...`, e.g. `reroll 1 3`.")
        return Reroll(dice=[_die(w) for w in rest], payer=payer)
    if head == "use":
        if len(rest) == 3 and rest[1] == "die":
            return UseItem(item=rest[0], die=_die(rest[2]))
        return UseItem(item=_one(rest, "use ITEM [die D]"))
    if head == "give":
        if len(rest) == 3 and rest[1] == "for":
            return SwapItem(item=rest[0], take=rest[2])
        return GiveItem(item=_one(rest, "give ITEM [for ITEM]"))
    if head == "accept":
        respond: list[str] = []
        splits: dict[str, dict[str, int]] = {"partner": {}, "special": {}}
        i = 0
        while i < len(rest):
            if rest[i] == "respond" and i + 1 < len(rest):
                respond = [w for w in rest[i + 1].split(",") if w]
                i += 2
            elif rest[i] in splits:
                split = splits[rest[i]]
                i += 1
                while i < len(rest) and "=" in rest[i]:
                    k, _, v = rest[i].partition("=")
                    if k not in ("health", "luck", "item"):
                        raise ChatError("A split names health=N, luck=N or item=N.")
                    split[k] = integer(v, k, 0, 20)
                    i += 1
            else:
                raise ChatError(f"Unexpected {rest[i]!r}: write `accept [respond ITEM,...] [partner health=N ...] [special health=N ...]`.")
        return Accept(respond=respond, to_partner=splits["partner"], special_to_partner=splits["special"])
    if head == "order":
        return ChooseShopOrder(first=integer(_one(rest, "order SEAT"), "A seat", 0, 1))
    if head == "buy":
        return Buy(slot=integer(_one(rest, "buy SLOT"), "A slot", 1, 3))
    if head == "trade":
        return Trade(give=_one(rest, "trade ITEM"))
    raise ChatError(f"Unknown word {head!r} for Quests Over Coffee: try {', '.join(WORDS)} or help.")


def format(cmd: Command) -> str:
    """The chat line of a Quests Over Coffee command."""
    for word, typ in SIMPLE.items():
        if isinstance(cmd, typ):
            return word
    match cmd:
        case KeepItem(item=i):
            return f"keep {i}"
        case ChooseQuest(quest=q):
            return f"quest {q}"
        case PayForHelp(dice=d, companion=c):
            return f"pay {d}" + (" companion" if c else "")
        case ChooseDice(leader=ld, partner=p):
            return f"pick {ld[0] + 1} {ld[1] + 1} {p + 1}"
        case Reroll(dice=ds, payer=p):
            return "reroll " + " ".join(str(d + 1) for d in ds) + (f" payer {p}" if p is not None else "")
        case UseItem(item=i, die=d):
            return f"use {i}" + (f" die {d + 1}" if d is not None else "")
        case GiveItem(item=i):
            return f"give {i}"
        case SwapItem(item=i, take=t):
            return f"give {i} for {t}"
        case Accept(respond=rs, to_partner=sp, special_to_partner=ssp):
            out = "accept"
            if rs:
                out += " respond " + ",".join(rs)
            if sp:
                out += " partner " + " ".join(f"{k}={v}" for k, v in sorted(sp.items()))
            if ssp:
                out += " special " + " ".join(f"{k}={v}" for k, v in sorted(ssp.items()))
            return out
        case ChooseShopOrder(first=f):
            return f"order {f}"
        case Buy(slot=s):
            return f"buy {s}"
        case Trade(give=g):
            return f"trade {g}"
    raise ChatError(f"Not a Quests Over Coffee command: {cmd!r}")


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """Phase, party, quests, dice and the shop, in a few lines."""
    party = " | ".join(f"{names[s['seat']]}: health {s['health']}/{s['max_health']} luck {s['luck']} items {','.join(s['items']) or '-'}"
                       for s in v["seats"])
    lines = [f"{v['mode']} round {v['round']} {v['phase']}; money {v['money']}; score {v['score']} (grade {v['star_grade']}); {party}"]
    if v["face_up"] and not v["active"]:
        lines.append("quests: " + "; ".join(f"{q['id']} {q['stars']}* fail<={q['fail']} success>={q['success']}" for q in v["face_up"]))
    if v["active"]:
        q = v["active"]
        dice = " ".join(f"{i + 1}:{d}" for i, d in enumerate(v["dice"])) or "not rolled"
        lines.append(f"quest {q['id']} {q['stars']}* fail<={q['fail']} success>={q['success']}; dice {dice} total {v['total']}")
    if v["offers"]:
        lines.append(f"offered: {' '.join(v['offers'])}")
    if v["phase"] == "shop":
        lines.append("shop: " + " ".join(f"{i + 1}:{it or '-'}({p})" for i, (it, p) in enumerate(zip(v["shop_items"], v["shop_prices"], strict=False))))
    return "\n".join(lines)


def render_event(b: dict, who: Any) -> str:
    """One Quests Over Coffee event as a short sentence."""
    t = b["type"].removeprefix("qoc.")
    if t == "quest_chosen":
        return f"{who(b['seat'])} takes on {b['quest']}"
    if t == "rolled":
        return f"rolled {short(b['base'] + b.get('extra', []))}"
    if t == "rerolled":
        return f"rerolled to {short(b['dice'])}"
    if t == "quest_resolved":
        return f"{b['quest']}: {b['band']} with {b['total']}" + (" + special" if b["special"] else "")
    if t == "item_kept":
        return f"{who(b['seat'])} keeps {b['item']}"
    if t == "item_bought":
        return f"{who(b['seat'])} buys {b['item']} for {b['price']}"
    if t == "help_paid":
        return f"help: {b['dice']} dice for {b['cost']}" + (f", companion {b['companion']}" if b.get("companion") else "")
    if t == "leader_rolled":
        return f"{who(b['leader'])} leads"
    if t == "item_used":
        return f"{who(b['seat'])} uses {b['item']}"
    return t.replace("_", " ")
