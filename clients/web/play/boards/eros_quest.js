// Ero's Quest (docs/games/eros_quest.md): the solo adventure with the Questeros deck. The play
// area (Blades, Staves, Orbs, Cups stacks; used cards faded), the hand, the next Encounter,
// combat against an Epic, the Epics completed, deck and discard.

import { h } from "../dom.js";
import { cardEl, cardName } from "./cards.js";

const list = (ctx, ids) => (ids && ids.length ? ids.map((id) => cardName(ctx.content, id)).join(", ") : "none");

export function commandText(cmd, ctx) {
  const n = (id) => cardName(ctx.content, id);
  switch (cmd.type) {
    case "eros_quest.develop": return `Develop ${n(cmd.card)}`;
    case "eros_quest.purchase": return `Purchase with ${n(cmd.orb)}`;
    case "eros_quest.choose": return `Choose ${n(cmd.card)}${cmd.bottom?.length ? ` (${list(ctx, cmd.bottom)} to the bottom)` : ""}`;
    case "eros_quest.forget": return `Forget ${list(ctx, cmd.cards)}`;
    case "eros_quest.learn": return "Learn (draw)";
    case "eros_quest.encounter": {
      const parts = [];
      if (cmd.cards?.length) parts.push(`giving ${list(ctx, cmd.cards)}`);
      if (cmd.orbs?.length) parts.push(`using ${list(ctx, cmd.orbs)}`);
      return (cmd.deter ? "Deter the Encounter" : "Face the Encounter") + (parts.length ? ` ${parts.join(", ")}` : "");
    }
    case "eros_quest.recover": return `Recover ${n(cmd.target)} with ${n(cmd.card)}`;
    case "eros_quest.rest": return "Rest";
    case "eros_quest.take_hit": return `Take the hit with ${n(cmd.card)}`;
    case "eros_quest.attack": return cmd.blade || cmd.staff ? `Attack with ${[cmd.blade, cmd.staff].filter(Boolean).map(n).join(" and ")}` : "Do not attack";
    case "eros_quest.support": return cmd.bonus || cmd.ally ? `Support with ${[cmd.bonus, cmd.ally].filter(Boolean).map(n).join(" and ")}` : "No support";
    default: return undefined;
  }
}

export function eventText(b, ctx) {
  const n = (id) => cardName(ctx.content, id);
  switch (b.type) {
    case "eros_quest.adventure_set_up": return `The adventure begins: ${b.hand?.length ? `hand ${list(ctx, b.hand)}, ` : ""}${b.deck_count} cards in the deck.`;
    case "eros_quest.card_developed": return `${n(b.card)} is developed onto ${b.stack}${b.bonus ? " (bonus)" : ""}.`;
    case "eros_quest.orb_used": return `${n(b.orb)} is used${b.looked?.length ? `: looking at ${list(ctx, b.looked)}` : ""}.`;
    case "eros_quest.cards_looked": return b.looked?.length ? `Looking at ${list(ctx, b.looked)}.` : "Cards looked at.";
    case "eros_quest.card_chosen": return `${n(b.card)} chosen.`;
    case "eros_quest.cards_forgotten": return `Forgotten: ${list(ctx, b.cards)}.`;
    case "eros_quest.cards_drawn": return b.cards?.length ? `Drawn: ${list(ctx, b.cards)}.` : "Cards drawn.";
    case "eros_quest.encounter_faced": return `${b.deter ? "Deterring" : "Facing"} ${n(b.epic)}.`;
    case "eros_quest.ally_placed": return `${n(b.card)} joins as an ally.`;
    case "eros_quest.cards_recovered": return `Recovered: ${list(ctx, b.cards)}.`;
    case "eros_quest.cards_recalled": return `Recalled: ${list(ctx, b.cards)}.`;
    case "eros_quest.discard_returned": return `${b.count} discarded cards return to the deck${b.shuffled ? " (shuffled)" : ""}.`;
    case "eros_quest.card_destroyed": return `${n(b.card)} is destroyed (${b.where}).`;
    case "eros_quest.card_recovered": return `${n(b.target)} recovered with ${n(b.card)}.`;
    case "eros_quest.combat_started": return `Combat with ${n(b.epic)} (value ${b.value}).`;
    case "eros_quest.hit_taken": return `${n(b.card)} takes the hit (${b.remaining} left).`;
    case "eros_quest.attacked": return `${b.support ? "Support" : "Attack"} with ${list(ctx, b.cards)}: ${b.damage} damage (${b.dealt} dealt).`;
    case "eros_quest.encounter_completed": return `${n(b.epic)} is ${b.defeated ? "defeated" : "completed"}.`;
    case "eros_quest.rested": return `Rest: ${n(b.burned)} burned.`;
    case "eros_quest.quest_ended": return `The quest ends: ${b.won ? "won" : "lost"} (${b.reason}).`;
    default: return undefined;
  }
}

function stack(ctx, name, cards) {
  return h("div", { class: "zone stack" }, h("div", { class: "label" }, `${name} (${cards.length})`),
    h("div", { class: "cards" }, cards.map((pc) => { const el = cardEl(ctx.content, pc.card, { note: pc.used ? "used" : "" }); if (pc.used) el.classList.add("used"); return el; })));
}

export function render(ctx) {
  const v = ctx.view;
  const c = ctx.content;
  const single = new Map();
  if (ctx.myTurn && !ctx.busy) {
    for (const cmd of v.legal || []) {
      if (cmd.type === "eros_quest.develop" && !single.has(cmd.card)) single.set(cmd.card, cmd);
    }
  }
  const enc = v.next_encounter ? h("div", { class: "zone", id: "encounter" }, h("div", { class: "label" }, "Next Encounter"),
    h("div", { class: "cards" }, h("div", { class: "card epic" }, h("div", { class: "name" }, v.next_encounter.name), h("div", { class: "text" }, v.next_encounter.text)))) : null;
  const combat = v.combat ? h("div", { class: "zone", id: "combat" }, h("div", { class: "label" }, "Combat"),
    h("p", {}, `${cardName(c, v.combat.epic)}: value ${v.combat.value}, ${v.combat.dealt} damage dealt · round ${v.combat.round} · step ${v.combat.step}${v.combat.step === "hit" ? ` (${v.combat.hit_remaining} to absorb)` : ""}`)) : null;
  const hand = h("div", { class: "zone hand" }, h("div", { class: "label" }, `Hand (${v.hand_count})${single.size ? " · highlighted: develop" : ""}`),
    h("div", { class: "cards" }, v.hand.map((id) => cardEl(c, id, single.has(id) ? { playable: true, onClick: () => ctx.send(single.get(id)), note: "develop" } : {}))));
  const looking = v.looking.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "Looking at"), h("div", { class: "cards" }, v.looking.map((id) => cardEl(c, id)))) : null;
  const end = v.won !== null && v.won !== undefined ? h("p", { class: "result" }, `${v.won ? "Quest won" : "Quest lost"}${v.end_reason ? `: ${v.end_reason}` : ""}`) : null;
  return h("div", { class: "eros" },
    h("p", {}, `Turn ${v.turn} · ${v.phase} · deck ${v.deck_count} · discard ${v.discard.length} · destroyed ${v.destroyed_count} · Epics left ${v.epics_left}` +
      (v.actions_done.length ? ` · done this turn: ${v.actions_done.join(", ")}` : "")),
    end, enc, combat,
    h("div", { class: "play-zones" }, stack(ctx, "Blades", v.blades), stack(ctx, "Staves", v.staves), stack(ctx, "Orbs", v.orbs), stack(ctx, "Cups (health)", v.cups)),
    v.allies.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "Allies"), h("div", { class: "cards" }, v.allies.map((id) => cardEl(c, id)))) : null,
    hand, looking,
    h("p", { class: "muted" }, `Completed: ${list(ctx, v.completed)} · defeated: ${v.defeated.length ? v.defeated.join(", ") : "none"}${v.aside.length ? ` · set aside: ${list(ctx, v.aside)}` : ""}`));
}
