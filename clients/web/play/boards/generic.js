// Generic rendering for a title without a board of its own: the view's fields as a table
// (lists of short values joined, nested records as sub-tables); the moves are the legal list.

import { h } from "../dom.js";

function value(v, depth) {
  if (v === null || v === undefined) return h("span", { class: "muted" }, "-");
  if (Array.isArray(v)) {
    if (!v.length) return h("span", { class: "muted" }, "none");
    if (v.every((x) => x === null || typeof x !== "object")) return v.map((x) => (x === null ? "-" : String(x))).join(", ");
    if (depth > 2) return `${v.length} items`;
    return h("ol", { class: "plain" }, v.map((x) => h("li", {}, value(x, depth + 1))));
  }
  if (typeof v === "object") {
    if (depth > 2) return JSON.stringify(v).slice(0, 120);
    return table(v, depth + 1);
  }
  return String(v);
}

function table(obj, depth = 0) {
  return h("table", { class: "fields" }, Object.entries(obj).filter(([k]) => k !== "legal" && k !== "placements").map(([k, v]) =>
    h("tr", {}, h("th", {}, k.replace(/_/g, " ")), h("td", {}, value(v, depth)))));
}

export function render(ctx) {
  return h("div", { class: "generic-board" }, table(ctx.view || {}));
}
