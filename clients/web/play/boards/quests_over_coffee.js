// Quests Over Coffee (docs/games/quests_over_coffee.md): the party (health, luck, items,
// money), the face-up quests (choose one on your turn), the active quest with its thresholds,
// the dice rolled (and the co-op pool), the offers and the Shop; score and grade.

import { h } from "../dom.js";
import { seatName } from "../words.js";

function cardName(ctx, id) {
  if (id === null || id === undefined) return "nothing";
  const v = ctx.view;
  const c = (v?.cards || []).find((x) => x.id === id)
    || (ctx.content.items?.item || []).find((x) => x.id === id)
    || (ctx.content.companions?.companion || []).find((x) => x.id === id)
    || (ctx.content.environments?.environment || []).find((x) => x.id === id)
    || (ctx.content.quests?.quest || []).find((x) => x.id === id);
  return c?.name || id;
}

function cardText(ctx, id) {
  const c = (ctx.view?.cards || []).find((x) => x.id === id) || (ctx.content.items?.item || []).find((x) => x.id === id);
  return c?.text || "";
}

function dieList(ds) { return ds.map((d) => d + 1).join(", "); }

export function commandText(cmd, ctx) {
  const n = (id) => cardName(ctx, id);
  switch (cmd.type) {
    case "qoc.keep_item": return `Keep ${n(cmd.item)}`;
    case "qoc.choose_quest": return `Take on ${n(cmd.quest)}`;
    case "qoc.pay_for_help": return cmd.companion ? "Pay for a companion" : `Pay for ${cmd.dice} help ${cmd.dice === 1 ? "die" : "dice"}`;
    case "qoc.roll": return "Roll the dice";
    case "qoc.choose_dice": return `Keep my dice ${dieList(cmd.leader)} and partner die ${cmd.partner + 1}`;
    case "qoc.reroll": return `Spend 1 Luck${cmd.payer !== null && cmd.payer !== undefined && cmd.payer !== ctx.seat ? ` (${seatName(ctx, cmd.payer)}'s)` : ""}: reroll ${cmd.dice.length === 1 ? "die" : "dice"} ${dieList(cmd.dice)}`;
    case "qoc.use_item": return `Use ${n(cmd.item)}${cmd.die !== null && cmd.die !== undefined ? ` on die ${cmd.die + 1}` : ""}`;
    case "qoc.give_item": return `Give ${n(cmd.item)} to my partner`;
    case "qoc.swap_item": return `Swap ${n(cmd.item)} for ${n(cmd.take)}`;
    case "qoc.accept": {
      const parts = [];
      if (cmd.respond?.length) parts.push(`responding with ${cmd.respond.map(n).join(", ")}`);
      const split = Object.entries(cmd.to_partner || {}).filter(([, x]) => x).map(([k, x]) => `${x} ${k}`);
      if (split.length) parts.push(`partner takes ${split.join(", ")}`);
      const sp = Object.entries(cmd.special_to_partner || {}).filter(([, x]) => x).map(([k, x]) => `${x} ${k}`);
      if (sp.length) parts.push(`partner takes ${sp.join(", ")} of the special`);
      return "Accept the roll" + (parts.length ? ` (${parts.join("; ")})` : "");
    }
    case "qoc.choose_shop_order": return `${cmd.first === ctx.seat ? "I shop" : `${seatName(ctx, cmd.first)} shops`} first`;
    case "qoc.buy": return `Buy ${n(ctx.view?.shop_items?.[cmd.slot - 1])} (spot ${cmd.slot}, ${ctx.view?.shop_costs?.[cmd.slot - 1] ?? "?"} money)`;
    case "qoc.trade": return `Trade ${n(cmd.give)} for ${n(ctx.view?.shop_items?.[(ctx.view?.shop_trade_slot || 3) - 1])}`;
    case "qoc.swap_environment": return "Swap the environment";
    case "qoc.leave_shop": return "Leave the Shop";
    default: return undefined;
  }
}

export function eventText(b, ctx) {
  const n = (id) => cardName(ctx, id);
  const who = (x) => seatName(ctx, x);
  switch (b.type) {
    case "qoc.set_up": return `The café opens: ${b.face_up.length} quests face up${b.environment ? `, environment ${n(b.environment)}` : ""}.`;
    case "qoc.item_kept": return `${who(b.seat)} keeps ${n(b.item)}.`;
    case "qoc.leader_rolled": return `${who(b.leader)} leads (rolls ${b.rolls.map((r) => r.join("+")).join(" vs ")}).`;
    case "qoc.quest_chosen": return `${who(b.seat)} takes on ${n(b.quest)}.`;
    case "qoc.help_paid": return `Help bought: ${b.dice} ${b.dice === 1 ? "die" : "dice"} for ${b.cost} money${b.rolled.length ? ` (rolled ${b.rolled.join(", ")})` : ""}${b.companion ? `, companion ${n(b.companion)}` : ""}.`;
    case "qoc.rolled": return `Rolled ${b.base.join(", ")}${b.pool?.length ? ` (pool ${b.pool.map((p) => p.join(",")).join(" | ")})` : ""}${b.extra?.length ? ` plus help ${b.extra.join(", ")}` : ""}.`;
    case "qoc.dice_chosen": return `Dice kept: ${b.base.join(", ")}.`;
    case "qoc.rerolled": return `${who(b.payer)} spends 1 Luck: now ${b.dice.join(", ")}.`;
    case "qoc.item_used": return `${who(b.seat)} uses ${n(b.item)}${b.dice?.length ? `: dice ${b.dice.join(", ")}` : ""}.`;
    case "qoc.item_given": return `${who(b.seat)} gives ${n(b.item)} to ${who(b.to)}.`;
    case "qoc.item_swapped": return `${who(b.seat)} swaps ${n(b.gave)} for ${n(b.took)}.`;
    case "qoc.quest_resolved": return `${n(b.quest)}: total ${b.total}, ${b.band}${b.special ? " with the special" : ""}${b.defeated ? "; the party is defeated" : ""}.`;
    case "qoc.shop_opened": return `The Shop opens: ${b.items.map((x) => n(x)).join(", ")} (prices ${b.prices.join(", ")}).`;
    case "qoc.shop_order_chosen": return `${who(b.order[0])} shops first.`;
    case "qoc.item_bought": return `${who(b.seat)} buys ${n(b.item)} for ${b.price}.`;
    case "qoc.item_traded": return `${who(b.seat)} trades ${n(b.gave)} for ${n(b.took)}.`;
    case "qoc.environment_swapped": return `The environment is now ${n(b.new)}.`;
    case "qoc.shop_left": return `${who(b.seat)} leaves the Shop.`;
    case "qoc.shop_closed": return "The Shop closes.";
    default: return undefined;
  }
}

function meter(cls, value, max) {
  return h("span", { class: `meter ${cls}`, title: `${value} of ${max}` }, Array.from({ length: max }, (_, i) => h("i", { class: i < value ? "on" : "" })), ` ${value}/${max}`);
}

function questCard(ctx, q, cmd) {
  const attrs = { class: "card quest" + (cmd ? " playable move" : ""), dataset: { quest: q.id } };
  if (cmd) {
    attrs.role = "button";
    attrs.on = { click: () => ctx.send(cmd) };
  }
  return h("div", attrs, h("div", { class: "name" }, `${q.name} ${"★".repeat(q.stars)}`),
    h("div", { class: "text" }, `fail ≤ ${q.fail} · success ≥ ${q.success}${q.special ? ` · special ${q.special}` : ""}`),
    h("div", { class: "text" }, `fail: ${q.fail_event || "-"} · success: ${q.success_event || "-"}${q.special_event ? ` · special: ${q.special_event}` : ""}`));
}

export function render(ctx) {
  const v = ctx.view;
  const legal = ctx.myTurn && !ctx.busy ? v.legal || [] : [];
  const chooseOf = new Map(legal.filter((c) => c.type === "qoc.choose_quest").map((c) => [c.quest, c]));
  const party = h("table", { class: "scores", id: "party" },
    h("tr", {}, h("th", {}, "seat"), h("th", {}, "health"), h("th", {}, "luck"), h("th", {}, "items")),
    v.seats.map((st) => h("tr", {}, h("td", {}, seatName(ctx, st.seat), st.seat === v.leader && v.mode === "coop" ? " (leader)" : ""),
      h("td", {}, meter("health", st.health, st.max_health)), h("td", {}, meter("luck", st.luck, st.max_luck)),
      h("td", {}, st.items.length ? st.items.map((id) => h("span", { class: "item", title: cardText(ctx, id) }, cardName(ctx, id))).reduce((a, x) => (a.length ? [...a, ", ", x] : [x]), []) : "-"))));
  const money = h("p", {}, "Money ", meter("money", Math.min(v.money, v.max_money), v.max_money),
    ` · round ${v.round} · ${v.phase} · quests left ${v.deck_left}${v.environment ? ` · environment: ${cardName(ctx, v.environment)}` : ""}`);
  const faceUp = v.face_up.length ? h("div", { class: "zone quests" }, h("div", { class: "label" }, "Quests face up" + (chooseOf.size ? " (click one to take it on)" : "")),
    h("div", { class: "cards" }, v.face_up.map((q) => questCard(ctx, q, chooseOf.get(q.id))))) : null;
  const active = v.active ? h("div", { class: "zone", id: "active-quest" }, h("div", { class: "label" }, "The quest"),
    h("div", { class: "cards" }, questCard(ctx, v.active, null)),
    h("div", { class: "dice", id: "dice" }, v.dice.map((d, i) => h("span", { class: "die", title: `die ${i + 1}` }, d))),
    v.pool.length ? h("div", { class: "dice" }, h("span", { class: "muted" }, "pool: "), v.pool.map((ds, s) => ds.map((d) => h("span", { class: "die pool", title: seatName(ctx, s) }, d)))) : null,
    h("p", {}, v.rolled ? `Total ${v.total} (fail ≤ ${v.active.fail}, success ≥ ${v.active.success})` : `Help dice: ${v.help}${v.help_cost ? ` · a help die costs ${v.help_cost}` : ""}`,
      v.companion ? ` · companion: ${cardName(ctx, v.companion)}` : "")) : null;
  const offers = v.offers.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "Items offered"),
    h("div", { class: "cards" }, v.offers.map((id) => h("div", { class: "card" }, h("div", { class: "name" }, cardName(ctx, id)), h("div", { class: "text" }, cardText(ctx, id)))))) : null;
  const shop = v.shop_items.length ? h("div", { class: "zone", id: "shop" }, h("div", { class: "label" }, "The Shop"),
    h("div", { class: "cards" }, v.shop_items.map((id, i) => h("div", { class: "card" }, h("div", { class: "name" }, id ? cardName(ctx, id) : "(empty)"),
      h("div", { class: "text" }, i + 1 === v.shop_trade_slot ? "TRADE spot" : `costs ${v.shop_costs[i] ?? v.shop_prices[i]}`), id ? h("div", { class: "text" }, cardText(ctx, id)) : null)))) : null;
  const score = h("p", { class: "muted" }, `Kept ${v.kept.length} · failed ${v.failed.length} · abandoned ${v.abandoned.length} · score ${v.score}${v.grade ? ` · ${v.grade}` : ""}${v.defeated ? " · defeated" : ""}`);
  return h("div", { class: "qoc" }, money, party, active, faceUp, offers, shop, score);
}
