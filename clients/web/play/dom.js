// Building DOM and SVG nodes without innerHTML: every string becomes a text node, so nothing a
// player typed (names) or a server sent can run as markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function put(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value" && "value" in el) el.value = v;
    else if (k === "checked" && "checked" in el) el.checked = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

function append(el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === undefined || k === null || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return el;
}

/** h("button", {class: "x", on: {click}}, "text", child, [more]) -> HTMLElement */
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  put(el, attrs);
  return append(el, kids);
}

/** s("polygon", {points}) -> SVGElement (same shape as h). */
export function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG_NS, tag);
  put(el, attrs);
  return append(el, kids);
}

/** Replace the children of el by kids. */
export function fill(el, ...kids) {
  el.replaceChildren();
  return append(el, kids);
}
