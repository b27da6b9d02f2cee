// The Fate Deck (docs/games/fate_deck.md): the GM's tool with the Questeros deck. Each player's
// secret FATE card (shown to the GM, to everyone once revealed, never to its holder before),
// awarded cards, the last readings (with their tone) and d20 rolls, the GM's pile.

import { h } from "../dom.js";
import { seatName } from "../words.js";
import { cardEl, cardName } from "./cards.js";

function fateCard(ctx, fc, note) {
  const el = cardEl(ctx.content, fc.card, { note });
  el.append(h("div", { class: "text" }, fc.meaning));
  el.title = `${fc.name}: ${fc.meaning}`;
  return el;
}

export function commandText(cmd, ctx) {
  switch (cmd.type) {
    case "fate_deck.award": return `Award a card to ${seatName(ctx, cmd.player)}`;
    case "fate_deck.reveal": return `Reveal ${seatName(ctx, cmd.player)}'s FATE`;
    case "fate_deck.roll": return cmd.player === null || cmd.player === undefined ? "Roll the d20" : `Roll the d20 for ${seatName(ctx, cmd.player)}`;
    case "fate_deck.read": return `Read ${cmd.cards} card${cmd.cards === 1 ? "" : "s"}`;
    case "fate_deck.hand_in": return `Hand in ${cmd.cards.map((id) => cardName(ctx.content, id)).join(", ")}`;
    case "fate_deck.end_session": return "End the session";
    default: return undefined;
  }
}

export function eventText(b, ctx) {
  const who = (x) => seatName(ctx, x);
  const names = (ids) => ids.map((id) => cardName(ctx.content, id)).join(", ");
  switch (b.type) {
    case "fate_deck.session_opened": return `The session opens (${b.deck_count} cards).`;
    case "fate_deck.fate_assigned": return `A FATE card is dealt${b.drawing?.cards?.length ? `: ${names(b.drawing.cards)}` : ""}.`;
    case "fate_deck.card_awarded": return `${who(b.player)} is awarded a card${b.drawing?.cards?.length ? `: ${names(b.drawing.cards)}` : ""}.`;
    case "fate_deck.fate_revealed": return `${who(b.player)}'s FATE is revealed: ${cardName(ctx.content, b.card)}.`;
    case "fate_deck.die_rolled": return `d${b.sides} rolled${b.player !== null && b.player !== undefined ? ` for ${who(b.player)}` : ""}: ${b.value}.`;
    case "fate_deck.cards_handed_in": return `${who(b.player)} hands in ${names(b.cards)}.`;
    case "fate_deck.reading_drawn": return `A reading: ${names(b.drawing.cards)}${b.drawing.tone ? ` (${b.drawing.tone})` : ""}.`;
    case "fate_deck.session_ended": return "The session ends.";
    default: return undefined;
  }
}

export function render(ctx) {
  const v = ctx.view;
  const c = ctx.content;
  const players = h("div", { class: "zone", id: "players" }, h("div", { class: "label" }, "Players"),
    v.players.map((p) => h("div", { class: "zone player" }, h("b", {}, seatName(ctx, p.seat)),
      p.seat === ctx.seat ? " (you)" : "",
      h("div", { class: "cards" },
        p.fate ? fateCard(ctx, p.fate, p.revealed ? "FATE (revealed)" : "FATE (secret)") : p.has_fate ? h("div", { class: "card" }, h("div", { class: "name" }, "FATE"), h("div", { class: "text" }, "face down")) : null,
        p.acquired.map((fc) => fateCard(ctx, fc, "awarded")),
        !p.acquired.length && p.acquired_count ? h("div", { class: "card" }, h("div", { class: "text" }, `${p.acquired_count} awarded (hidden)`)) : null))));
  const readings = v.readings.length ? h("div", { class: "zone", id: "readings" }, h("div", { class: "label" }, "Readings (newest last)"),
    v.readings.map((r) => h("div", { class: "cards" }, r.cards.map((fc) => fateCard(ctx, fc, r.tone || "")), r.gods.map((g) => fateCard(ctx, g, "set aside"))))) : null;
  const rolls = v.rolls.length ? h("div", { class: "dice", id: "rolls" }, v.rolls.map((r) => h("span", { class: "die", title: `d${r.sides}${r.player !== null && r.player !== undefined ? " for " + seatName(ctx, r.player) : ""}` }, r.value))) : null;
  const pile = v.handed_in.length ? h("div", { class: "zone" }, h("div", { class: "label" }, "The GM's pile"), h("div", { class: "cards" }, v.handed_in.map((fc) => cardEl(c, fc.card)))) : null;
  return h("div", { class: "fate" }, h("p", {}, `You are ${v.role === "gm" ? "the GM" : v.role} · ${v.open ? "session open" : "session closed"} · GM acts ${v.acts} · deck ${v.deck_count}`),
    players, rolls ? h("div", { class: "zone" }, h("div", { class: "label" }, "d20 rolls"), rolls) : null, readings, pile);
}
