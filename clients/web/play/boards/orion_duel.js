// Orion Duel (docs/games/orion_duel.md): the 85-space hex board in SVG (pointy-top axial cells,
// r growing downwards), galaxies and black holes, the placed hexes in Blue and Orange, the six
// named sides; each seat's tiles (used ones faded). On your turn: pick a tile and an orientation
// (from the view's compact `placements`), and the board marks every legal anchor: hovering one
// shows the tile there, clicking places it. Manual setup: the legal token cells are clickable.

import { h, s } from "../dom.js";
import { seatName } from "../words.js";

const SIZE = 24;
const SQ3 = Math.sqrt(3);
const COLOURS = ["Blue", "Orange"];
// the chosen tile and orientation, per game (kept across re-renders of the same page)
const choice = new Map();

function px(q, r, size = SIZE) {
  return [size * SQ3 * (q + r / 2), size * 1.5 * r];
}

function hexPoints(q, r, size = SIZE, shrink = 0) {
  const [x, y] = px(q, r, size);
  const rad = size - shrink;
  const pts = [];
  for (let i = 0; i < 6; i++) {
    const a = (Math.PI / 180) * (60 * i - 30);
    pts.push(`${(x + rad * Math.cos(a)).toFixed(1)},${(y + rad * Math.sin(a)).toFixed(1)}`);
  }
  return pts.join(" ");
}

function cells(board) {
  const R = board?.radius ?? 5;
  const corners = new Set((board?.corners || []).map(([q, r]) => `${q},${r}`));
  const out = [];
  for (let q = -R; q <= R; q++) for (let r = -R; r <= R; r++) {
    if (Math.max(Math.abs(q), Math.abs(r), Math.abs(q + r)) > R || corners.has(`${q},${r}`)) continue;
    out.push([q, r]);
  }
  return out;
}

function tileShape(content, id) {
  return (content?.tiles?.tile || []).find((t) => t.id === id);
}

/** A tile's hexes as a small SVG, own/other coloured for `seat`. */
function tileSvg(hexes, seat, size = 9) {
  const cs = hexes.map(([q, r, c]) => [q, r, typeof c === "number" ? c : c === "own" ? seat : 1 - seat]);
  const xy = cs.map(([q, r]) => px(q, r, size));
  const xs = xy.map((p) => p[0]);
  const ys = xy.map((p) => p[1]);
  const pad = size + 2;
  const vb = `${Math.min(...xs) - pad} ${Math.min(...ys) - pad} ${Math.max(...xs) - Math.min(...xs) + 2 * pad} ${Math.max(...ys) - Math.min(...ys) + 2 * pad}`;
  return s("svg", { viewBox: vb, "aria-hidden": "true" }, cs.map(([q, r, c]) => s("polygon", { points: hexPoints(q, r, size, 0.8), class: `hex${c}` })));
}

export function commandText(cmd, ctx) {
  switch (cmd.type) {
    case "orion_duel.place_token": {
      const v = ctx.view;
      const kind = v && v.galaxy_seat === ctx.seat ? "a galaxy" : "a black hole";
      return `Place ${kind} at ${cmd.cell.join(",")}`;
    }
    case "orion_duel.choose_starter": return cmd.seat === ctx.seat ? "I place the first tile" : `${seatName(ctx, cmd.seat)} places the first tile`;
    case "orion_duel.place_tile": return `Place ${cmd.tile} at ${cmd.anchor.join(",")} turned ${cmd.rotation}${cmd.mirror ? " mirrored" : ""}`;
    default: return undefined;
  }
}

export function eventText(b, ctx) {
  const who = (x) => seatName(ctx, x);
  switch (b.type) {
    case "orion_duel.roles_assigned": return `${who(b.galaxy_seat)} places the galaxies${b.by_chance ? " (by a coin)" : ""}.`;
    case "orion_duel.tokens_placed": return `The ${b.mode === "random" ? "random" : b.mode.replace("_", " ")} setup places ${b.galaxies.length} galaxies and ${b.black_holes.length} black holes.`;
    case "orion_duel.token_placed": return `${who(b.seat)} places a ${b.kind === "galaxy" ? "galaxy" : "black hole"} at ${b.cell.join(",")}.`;
    case "orion_duel.starter_chosen": return `${who(b.seat)} places the first tile${b.chooser === null || b.chooser === undefined ? " (by a coin)" : ""}.`;
    case "orion_duel.tile_placed": return `${who(b.seat)} (${COLOURS[b.seat]}) places ${b.tile} at ${b.anchor.join(",")}${b.scores.some((x) => x) ? `; victory conditions ${b.scores.join(" : ")}` : ""}.`;
    case "orion_duel.player_blocked": return `${who(b.seat)} cannot place any tile and loses.`;
    case "orion_duel.next_game": return `Game ${b.game} of the match begins (wins ${b.wins.join(" : ")}).`;
    case "orion_duel.match_decided": return b.winners.length ? `${b.winners.map(who).join(" and ")} wins the match ${b.wins.join(" : ")}.` : `The match is drawn ${b.wins.join(" : ")}.`;
    case "orion_duel.game_decided": return (b.winners.length ? `${b.winners.map(who).join(" and ")} wins` : "A draw") + ` (${b.reason.replace("_", " ")}; ${b.scores.join(" : ")}).`;
    default: return undefined;
  }
}

function orientKey(p) { return `${p.tile}|${p.rotation}|${p.mirror ? 1 : 0}`; }

export function render(ctx) {
  const v = ctx.view;
  const content = ctx.content;
  const gameId = ctx.env.game_id;
  const board = content.board || { radius: 5, corners: [], side: [] };
  const sideOf = new Map();
  for (const side of board.side || []) for (const [q, r] of side.cells) sideOf.set(`${q},${r}`, side.name);
  const galaxies = new Set(v.galaxies.map(([q, r]) => `${q},${r}`));
  const holes = new Set(v.black_holes.map(([q, r]) => `${q},${r}`));
  const placed = new Map(v.hexes.map(([q, r, c]) => [`${q},${r}`, c]));
  const mine = ctx.myTurn && !ctx.busy;

  // the tile and orientation chosen for placing (placements of the seat to move only)
  const groups = new Map();
  for (const p of v.placements || []) {
    if (!groups.has(p.tile)) groups.set(p.tile, []);
    groups.get(p.tile).push(p);
  }
  let sel = choice.get(gameId);
  const all = v.placements || [];
  if (!all.some((p) => orientKey(p) === sel)) sel = all.length ? orientKey(all[0]) : null;
  choice.set(gameId, sel);
  const chosen = all.find((p) => orientKey(p) === sel) || null;
  const rerender = () => ctx.rerender?.();

  const all_cells = cells(board);
  const svg = s("svg", { class: "hexboard", id: "hexboard", viewBox: "-262 -236 524 472", role: "img", "aria-label": "Orion Duel board" });
  const layer = { cells: s("g"), tokens: s("g"), marks: s("g"), ghost: s("g") };
  for (const [q, r] of all_cells) {
    const k = `${q},${r}`;
    const c = placed.get(k);
    layer.cells.append(s("polygon", { points: hexPoints(q, r), class: "cell" + (sideOf.has(k) ? " side" : "") + (c !== undefined ? ` hex${c}` : ""), dataset: { cell: k } },
      s("title", {}, `${k}${sideOf.has(k) ? " · " + sideOf.get(k) : ""}`)));
    const [x, y] = px(q, r);
    if (galaxies.has(k)) layer.tokens.append(s("circle", { cx: x, cy: y, r: SIZE * 0.42, class: "galaxy" }, s("title", {}, `galaxy ${k}`)));
    if (holes.has(k)) layer.tokens.append(s("circle", { cx: x, cy: y, r: SIZE * 0.42, class: "blackhole" }, s("title", {}, `black hole ${k}`)));
  }
  // side names beside their middle cells
  for (const side of board.side || []) {
    const mid = side.cells.map(([q, r]) => px(q, r)).reduce((a, b) => [a[0] + b[0] / side.cells.length, a[1] + b[1] / side.cells.length], [0, 0]);
    const len = Math.hypot(mid[0], mid[1]) || 1;
    const f = (len + SIZE * 1.6) / len;
    layer.tokens.append(s("text", { x: (mid[0] * f).toFixed(1), y: (mid[1] * f).toFixed(1), class: "sidename", "text-anchor": "middle", "dominant-baseline": "middle" }, side.name));
  }
  // manual setup: the legal token cells
  if (mine) {
    for (const cmd of v.legal || []) {
      if (cmd.type !== "orion_duel.place_token") continue;
      const [q, r] = cmd.cell;
      layer.marks.append(s("polygon", { points: hexPoints(q, r, SIZE, 3), class: "anchor move", dataset: { type: cmd.type, cell: `${q},${r}` }, on: { click: () => ctx.send(cmd) } },
        s("title", {}, commandText(cmd, ctx))));
    }
  }
  // play: the anchors of the chosen tile and orientation; hover shows the tile there
  if (mine && chosen) {
    for (const [aq, ar] of chosen.anchors) {
      const cmd = { type: "orion_duel.place_tile", tile: chosen.tile, anchor: [aq, ar], rotation: chosen.rotation, mirror: chosen.mirror };
      const show = () => layer.ghost.replaceChildren(...chosen.hexes.map(([dq, dr, c]) => s("polygon", { points: hexPoints(aq + dq, ar + dr, SIZE, 2), class: `ghost${c}` })));
      layer.marks.append(s("polygon", {
        points: hexPoints(aq, ar, SIZE, 3), class: "anchor move", dataset: { type: cmd.type, cell: `${aq},${ar}` },
        on: { click: () => ctx.send(cmd), mouseenter: show, mouseleave: () => layer.ghost.replaceChildren() },
      }, s("title", {}, commandText(cmd, ctx))));
    }
  }
  svg.append(layer.cells, layer.tokens, layer.ghost, layer.marks);

  // the tile picker (seat to move, play phase)
  let picker = null;
  if (mine && all.length) {
    const tiles = [...groups.keys()].map((tile) => h("button", {
      type: "button", class: "tile tile-pick" + (chosen?.tile === tile ? " chosen" : ""), dataset: { tile }, title: tile,
      on: { click: () => { choice.set(gameId, orientKey(groups.get(tile)[0])); rerender(); } },
    }, tileSvg(groups.get(tile)[0].hexes, ctx.seat)));
    const orients = chosen ? groups.get(chosen.tile).map((p, i) => h("button", {
      type: "button", class: "tile orient-pick" + (orientKey(p) === sel ? " chosen" : ""), dataset: { orient: orientKey(p) },
      title: `turned ${p.rotation}${p.mirror ? ", mirrored" : ""}: ${p.anchors.length} places`,
      on: { click: () => { choice.set(gameId, orientKey(p)); rerender(); } },
    }, tileSvg(p.hexes, ctx.seat))) : [];
    picker = h("div", { class: "zone", id: "placer" },
      h("div", { class: "label" }, "Your tile (identical tiles shown once)"), h("div", { class: "tiles" }, tiles),
      h("div", { class: "label" }, `Orientation: ${chosen ? `${chosen.anchors.length} legal places, marked green on the board` : ""}`), h("div", { class: "tiles" }, orients));
  }

  const hand = (seat) => h("div", { class: "zone" }, h("div", { class: "label" }, `${seatName(ctx, seat)} (${COLOURS[seat]}) · conditions ${v.scores[seat]}/3${(v.conditions[seat] || []).length ? ": " + v.conditions[seat].join(", ") : ""}`),
    h("div", { class: "tiles" }, [...v.remaining[seat].map((id) => [id, false]), ...v.used[seat].map((id) => [id, true])].map(([id, used]) =>
      h("span", { class: "tile" + (used ? " used" : ""), title: id + (used ? " (placed)" : "") }, tileSvg(tileShape(content, id)?.hexes || [[0, 0, "own"]], seat, 7)))));
  const phase = { galaxies: "setup: placing galaxies", black_holes: "setup: placing black holes", choose_starter: "setup: choosing who starts", play: "play", over: "over" }[v.phase] || v.phase;
  const match = v.match_games > 1 ? ` · match game ${v.game_no} of ${v.match_games}, wins ${v.match_wins.join(" : ")}` : "";
  const end = v.winners ? h("p", { class: "result" }, v.winners.length ? `${v.winners.map((x) => seatName(ctx, x)).join(" and ")} wins (${v.reason})` : `Draw (${v.reason})`) : null;
  return h("div", { class: "orion" }, h("p", {}, `Phase: ${phase}${v.turn !== null ? ` · to place: ${seatName(ctx, v.turn)} (${COLOURS[v.turn]})` : ""}${match}`),
    end, picker, svg, hand(0), hand(1));
}
