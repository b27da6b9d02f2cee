// Questeros (docs/games/questeros.md): the seats' bids, quests and XP, the table (the turn's
// cards), your hand (the cards you may play are highlighted and clickable), the scorepad.

import { h } from "../dom.js";
import { seatName } from "../words.js";
import { cardEl, cardName, cardRow, className } from "./cards.js";

export function commandText(cmd, ctx) {
  const c = ctx.content;
  switch (cmd.type) {
    case "questeros.bid": return `Bid ${cmd.quests} quest${cmd.quests === 1 ? "" : "s"}`;
    case "questeros.play_card": return `Play ${cardName(c, cmd.card)}${cmd.pay_xp ? " (pay 1 XP)" : ""}`;
    case "questeros.look_at_hand": return cmd.target === null ? "Decline the Mentor's look" : `Look at ${seatName(ctx, cmd.target)}'s hand`;
    default: return undefined;
  }
}

export function eventText(b, ctx) {
  const c = ctx.content;
  const who = (s) => seatName(ctx, s);
  switch (b.type) {
    case "questeros.dealer_chosen": return `${who(b.dealer)} deals first; the Epics ${b.set_aside.join(", ")} are set aside.`;
    case "questeros.epic_added": return `${cardName(c, b.card)} goes into the deck.`;
    case "questeros.hands_dealt": {
      const mine = (b.hands || []).find((x) => x && x.length);
      return `Round ${b.round}: ${who(b.dealer)} deals 10 cards each.` + (mine ? ` Your hand: ${mine.map((id) => cardName(c, id)).join(", ")}.` : "");
    }
    case "questeros.bid_made": return `${who(b.seat)} bids ${b.quests}.`;
    case "questeros.card_played": return `${who(b.seat)} plays ${cardName(c, b.card)}${b.paid_xp ? ", paying 1 XP" : ""}${b.ability === "mentor_look" ? " (the Mentor: a look at a hand)" : ""}.`;
    case "questeros.hand_looked_at": return b.target === null ? `${who(b.seat)} declines the Mentor's look.` : `${who(b.seat)} looks at ${who(b.target)}'s hand${b.cards?.length ? ": " + b.cards.map((id) => cardName(c, id)).join(", ") : ""}.`;
    case "questeros.quest_won": return b.winner === null ? "Both Gods were played: nobody wins the quest." : `${who(b.winner)} wins the quest (${b.cards.map((id) => cardName(c, id)).join(", ")}).`;
    case "questeros.round_scored": return `Round ${b.round} scored: XP ${b.xp.map((x, i) => `${who(i)} ${x}`).join(", ")}.` + (b.questeros !== null && b.questeros !== undefined ? ` ${who(b.questeros)} is the Questeros (+10 XP).` : "");
    default: return undefined;
  }
}

export function render(ctx) {
  const v = ctx.view;
  const c = ctx.content;
  const playable = new Map();
  for (const cmd of v.legal || []) if (cmd.type === "questeros.play_card" && !cmd.pay_xp) playable.set(cmd.card, cmd);
  const payable = new Map();
  for (const cmd of v.legal || []) if (cmd.type === "questeros.play_card" && cmd.pay_xp) payable.set(cmd.card, cmd);
  const n = v.xp.length;
  const seats = h("table", { class: "scores", id: "q-seats" },
    h("tr", {}, h("th", {}, "seat"), h("th", {}, "bid"), h("th", {}, "quests won"), h("th", {}, "XP"), h("th", {}, "cards")),
    Array.from({ length: n }, (_, i) => h("tr", { class: (v.to_move || []).includes(i) ? "moving" : "" },
      h("td", {}, seatName(ctx, i), i === v.dealer ? " (dealer)" : "", i === v.initiative ? " ★" : ""),
      h("td", {}, v.bids[i] ?? "-"), h("td", {}, v.quests_won[i]), h("td", {}, v.xp[i]), h("td", {}, v.hand_counts[i]))));
  const info = h("p", { class: "q-info" }, `Round ${v.round} of 7 · turn ${v.turn} · ${v.phase}` +
    ` · Preferred Class: ${v.preferred ? className(v.preferred) : "none yet"} · deck ${v.deck_count}`);
  const tableCards = v.table.length
    ? h("div", { class: "cards" }, v.table.map((p) => cardEl(c, p.card, { note: seatName(ctx, p.seat) + (p.paid_xp ? " · paid" : "") })))
    : v.last_turn
      ? h("div", {}, h("div", { class: "cards" }, v.last_turn.plays.map((p) => cardEl(c, p.card, { note: seatName(ctx, p.seat) }))),
          h("p", { class: "muted" }, v.last_turn.winner === null ? "Last quest: nobody won it." : `Last quest won by ${seatName(ctx, v.last_turn.winner)}.`))
      : h("p", { class: "muted" }, "No card on the table.");
  const hand = ctx.seat === null ? null : h("div", { class: "zone hand" }, h("div", { class: "label" }, "Your hand" + (playable.size ? " (highlighted: playable)" : "")),
    h("div", { class: "cards" }, v.hand.map((id) => {
      const cmd = playable.get(id) || (payable.has(id) && !playable.has(id) ? payable.get(id) : null);
      return cardEl(c, id, cmd ? { playable: ctx.myTurn && !ctx.busy, onClick: () => ctx.send(cmd), note: cmd.pay_xp ? "pay 1 XP" : "" } : {});
    })));
  const look = v.mentor_look ? h("div", { class: "zone" }, h("div", { class: "label" }, `Your Mentor look at ${seatName(ctx, v.mentor_look.target)}'s hand`), cardRow(c, v.mentor_look.cards)) : null;
  const aside = v.set_aside.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "Set-aside Epics (top first)"), cardRow(c, v.set_aside)) : null;
  const pad = v.history.length ? h("table", { class: "scores", id: "scorepad" },
    h("tr", {}, h("th", {}, "round"), Array.from({ length: n }, (_, i) => h("th", {}, seatName(ctx, i)))),
    v.history.map((r) => h("tr", {}, h("td", {}, r.round), r.xp.map((x, i) => h("td", {}, `${r.quests[i]}/${r.bids[i]} → ${x}`))))) : null;
  return h("div", { class: "questeros" }, info, seats, h("div", { class: "zone table" }, h("div", { class: "label" }, "On the table"), tableCards), hand, look, aside,
    pad ? h("div", { class: "zone" }, h("div", { class: "label" }, "Scorepad (quests/bid → XP)"), pad) : null);
}
