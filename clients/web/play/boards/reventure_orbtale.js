// Reventure: Orbtale (docs/games/reventure_orbtale.md): the heroes (health, skills, active orbs,
// counts of hand, inventory, reserve), the chapter and its rule, combat (the cards revealed so
// far), your hand, inventory and reserve. Secret choices (hero picks, hands, combat cards) show
// who has chosen, never what.

import { h } from "../dom.js";
import { seatName } from "../words.js";

function kindOf(ctx, id) {
  const base = String(id).replace(/\d+$/, "");
  return (ctx.content.treasures?.card || []).find((c) => c.id === base)
    || (ctx.content.heroes?.hero || []).find((c) => c.id === base) || null;
}

function cname(ctx, id) { return kindOf(ctx, id)?.name || id; }

function card(ctx, id, opts = {}) {
  const k = kindOf(ctx, id);
  const attrs = { class: `card orbtale ${k?.kind || (k?.skill ? "hero" : "")}` + (opts.cmd ? " playable move" : ""), dataset: { card: id }, title: k?.text || id };
  if (opts.cmd) attrs.on = { click: () => ctx.send(opts.cmd) };
  return h("div", attrs, h("div", { class: "name" }, k?.name || id), h("div", { class: "text" }, k?.text || ""), opts.note ? h("div", { class: "text" }, opts.note) : null);
}

export function commandText(cmd, ctx) {
  const n = (id) => cname(ctx, id);
  switch (cmd.type) {
    case "reventure_orbtale.pick_hero": return `Pick the ${n(cmd.hero)}`;
    case "reventure_orbtale.organize": return `Hand: ${cmd.hand.length ? cmd.hand.map(n).join(", ") : "empty"}${cmd.discard?.length ? `; discard ${cmd.discard.map(n).join(", ")}` : ""}`;
    case "reventure_orbtale.attack": return `Attack ${seatName(ctx, cmd.target)}`;
    case "reventure_orbtale.skip": return "Skip the attack";
    case "reventure_orbtale.play_card": return `Play ${n(cmd.card)} face down`;
    default: return undefined;
  }
}

export function eventText(b, ctx) {
  const who = (x) => seatName(ctx, x);
  const n = (id) => cname(ctx, id);
  switch (b.type) {
    case "reventure_orbtale.game_set_up": return `The adventure is set up (${b.deck_count} treasures).`;
    case "reventure_orbtale.chapter_started": {
      const w = (ctx.content.chapters?.who || []).find((x) => x.id === b.who);
      const t = (ctx.content.chapters?.what || []).find((x) => x.id === b.what);
      return `Chapter ${b.chapter} begins: ${w?.text || b.who} ${t?.text || b.what}`;
    }
    case "reventure_orbtale.cards_drawn": return `${who(b.seat)} draws ${b.count} treasure${b.count === 1 ? "" : "s"}${b.cards?.length ? `: ${b.cards.map(n).join(", ")}` : ""}.`;
    case "reventure_orbtale.cards_discarded": return `${who(b.seat)} discards ${b.cards.map(n).join(", ")} from the ${b.source}.`;
    case "reventure_orbtale.attack_declared": return `${who(b.attacker)} attacks ${who(b.defender)}.`;
    case "reventure_orbtale.attack_skipped": return `${who(b.seat)} does not attack.`;
    case "reventure_orbtale.round_resolved": return `Combat round ${b.round}: ${b.winner === null || b.winner === undefined ? "no winner" : `${who(b.winner)} wins`} (${String(b.why).replace(/_/g, " ")}).`;
    case "reventure_orbtale.damage_dealt": return `${who(b.seat)} takes ${b.amount} damage (${b.health} health left).`;
    case "reventure_orbtale.healed": return `${who(b.seat)} heals ${b.amount} (${b.health} health).`;
    case "reventure_orbtale.cards_stolen": return `${who(b.thief)} steals ${b.cards.length ? b.cards.map(n).join(", ") : "a card"} from ${who(b.victim)}.`;
    case "reventure_orbtale.heroes_swapped": return `${who(b.seat)} swaps heroes with ${who(b.other)}.`;
    case "reventure_orbtale.combat_ended": return `The combat of ${who(b.attacker)} and ${who(b.defender)} ends.`;
    case "reventure_orbtale.hero_eliminated": return `${who(b.seat)}'s ${n(b.hero)} falls (${b.reserve} in reserve).`;
    case "reventure_orbtale.reincarnation_pending": return `${b.seats.map(who).join(", ")} pick a hero to return.`;
    case "reventure_orbtale.hero_reincarnated": return `${who(b.seat)} returns as the ${n(b.hero)}.`;
    case "reventure_orbtale.chapter_rule_applied": return b.seats.length ? `The chapter rule hits ${b.seats.map(who).join(", ")}.` : "The chapter rule hits nobody.";
    case "reventure_orbtale.chapter_ended": return `Chapter ${b.chapter} ends; ${who(b.token)} holds the turn token.`;
    case "reventure_orbtale.chapter_decks_shuffled": return null;
    case "reventure_orbtale.deck_reshuffled": return `The discard pile is shuffled into a new deck (${b.count} treasures).`;
    case "reventure_orbtale.skills_attached": return `The ${n(b.hero)} takes the skills ${b.skills.join(", ")}.`;
    case "reventure_orbtale.chosen": return b.choice ? `You choose in secret: ${commandText(b.choice, ctx)}.` : `${who(b.seat)} has chosen.`;
    case "reventure_orbtale.revealed": {
      const shown = (b.choices || []).filter((x) => x.choice && x.choice.type !== "reventure_orbtale.organize").map((x) => `${who(x.seat)}: ${commandText(x.choice, ctx)}`);
      return shown.length ? `Revealed: ${shown.join("; ")}.` : "The secret choices are revealed.";
    }
    case "reventure_orbtale.game_won": return `${(b.winners || []).map(who).join(" and ") || "Nobody"} wins (${String(b.reason).replace(/_/g, " ")}).`;
    default: return undefined;
  }
}

export function render(ctx) {
  const v = ctx.view;
  const env = ctx.env;
  const legal = ctx.myTurn && !ctx.busy ? v.legal || [] : [];
  const playOf = new Map(legal.filter((c) => c.type === "reventure_orbtale.play_card").map((c) => [c.card, c]));
  const pickOf = new Map(legal.filter((c) => c.type === "reventure_orbtale.pick_hero").map((c) => [c.hero, c]));
  const heroes = h("table", { class: "scores", id: "heroes" },
    h("tr", {}, h("th", {}, "seat"), h("th", {}, "hero"), h("th", {}, "health"), h("th", {}, "skills"), h("th", {}, "active orbs"), h("th", {}, "hand / inventory / reserve"), h("th", {}, "")),
    v.players.map((p) => h("tr", {}, h("td", {}, seatName(ctx, p.seat), v.turn === p.seat ? " ← turn" : ""),
      h("td", {}, p.hero ? cname(ctx, p.hero) : p.out ? "out" : "?"), h("td", {}, "♥".repeat(Math.max(0, p.health)) || "0"),
      h("td", {}, p.skills.join(", ") || "-"), h("td", {}, p.active_orbs.map((o) => cname(ctx, o)).join(", ") || "-"),
      h("td", {}, `${p.hand_count} / ${p.inventory_count} / ${p.reserve_count}`),
      h("td", {}, p.defeated ? "defeated" : "", (env.chosen || []).includes(p.seat) ? "chosen ✓" : ""))));
  const rule = v.rule ? h("p", { id: "rule" }, `Chapter ${v.chapter} rule: ${v.rule.text}`) : h("p", {}, `Chapter ${v.chapter}`);
  const combat = v.combat ? h("div", { class: "zone", id: "combat" }, h("div", { class: "label" }, `Combat: ${seatName(ctx, v.combat.attacker)} attacks ${seatName(ctx, v.combat.defender)}, round ${v.combat.round}`),
    v.combat.played.map((cards, i) => h("div", { class: "cards" }, h("span", { class: "muted" }, i === 0 ? "attacker: " : "defender: "), cards.map((id) => card(ctx, id))))) : null;
  const mine = ctx.seat === null ? null : h("div", {},
    v.offered.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "Heroes offered (pick one)"), h("div", { class: "cards" }, v.offered.map((id) => card(ctx, id, { cmd: pickOf.get(id) })))) : null,
    h("div", { class: "zone hand" }, h("div", { class: "label" }, `Your hand (limit ${v.hand_limit})${playOf.size ? " · highlighted: play face down" : ""}`), h("div", { class: "cards" }, v.hand.map((id) => card(ctx, id, { cmd: playOf.get(id) })))),
    h("div", { class: "zone" }, h("div", { class: "label" }, "Inventory"), h("div", { class: "cards" }, v.inventory.map((id) => card(ctx, id)))),
    v.reserve.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "Reserve heroes"), h("div", { class: "cards" }, v.reserve.map((id) => card(ctx, id)))) : null,
    env.my_choice ? h("p", { class: "muted" }, `Your secret choice: ${commandText(env.my_choice, ctx) || env.my_choice.type}`) : null);
  return h("div", { class: "orbtale" }, h("p", {}, `Phase: ${v.phase.replace("_", " ")} · deck ${v.deck_count} · discard ${v.discard.length}`), rule, heroes, combat, mine,
    v.winners.length ? h("p", { class: "result" }, `${v.winners.map((x) => seatName(ctx, x)).join(" and ")} wins`) : null);
}
