// The Questeros deck (shared by Questeros, Ero's Quest and the Fate Deck): card names from the
// title's content (GET /v1/titles/{title}: content.deck.card), drawn as small cards.

import { h } from "../dom.js";

const CLASS_NAMES = { blades: "Blades", staves: "Staves", orbs: "Orbs", cups: "Cups" };
const cache = new WeakMap();

function index(content) {
  let m = cache.get(content);
  if (!m) {
    m = new Map((content?.deck?.card || []).map((c) => [c.id, c]));
    cache.set(content, m);
  }
  return m;
}

/** The card record {id, kind, class?, value?, name} of an id (a stub for unknown ids). */
export function card(content, id) {
  return index(content).get(id) || { id, kind: "unknown", name: id };
}

/** "11 of Blades", "The Mentor (Epic 2)", "Adwanis, God of Light". */
export function cardName(content, id) {
  const c = card(content, id);
  if (c.kind === "epic") return `${c.name} (Epic ${c.value})`;
  return c.name || id;
}

export function className(cls) {
  return CLASS_NAMES[cls] || (cls === "epic" ? "Epics" : cls || "-");
}

/** A card as an element; opts: {playable, onClick, note, extra: {dataset}} */
export function cardEl(content, id, opts = {}) {
  const c = card(content, id);
  const kind = c.kind === "class" ? c.class : c.kind;
  const attrs = { class: `card ${kind}` + (opts.playable ? " playable move" : ""), dataset: { card: id, ...(opts.dataset || {}) }, title: cardName(content, id) };
  if (opts.playable) {
    attrs.role = "button";
    attrs.tabindex = 0;
    attrs.on = { click: opts.onClick, keydown: (e) => { if (e.key === "Enter" || e.key === " ") opts.onClick(e); } };
  }
  const top = c.kind === "class" ? `${c.value}` : c.kind === "epic" ? `E${c.value}` : c.kind === "god" ? "God" : id;
  const name = c.kind === "class" ? className(c.class) : c.name;
  return h("div", attrs, h("div", { class: "name" }, top), h("div", { class: "text" }, name), opts.note ? h("div", { class: "text" }, opts.note) : null);
}

export function cardRow(content, ids, opts = {}) {
  return h("div", { class: "cards" }, (ids || []).map((id) => cardEl(content, id, typeof opts === "function" ? opts(id) : opts)));
}
