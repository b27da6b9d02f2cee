// Chance derivations of each title for the browser verifier (verify.js): which draws a
// command's events record, in the order the rules drew them, so that every die and shuffle is
// re-derived from the seed's HMAC-SHA256 stream and compared with the event.
//
// Each title lists, per event type, a check(body, stream, state, ctx) that draws from the stream
// exactly what the rules drew for that event (services/games/<title>/rules.py) and returns ""
// or why the event differs; a fold(state, body) keeping what later checks start from; and the
// event types whose draws are not re-derived here ("unmodeled": they need more of the rules'
// state than the events give). A command with an unmodeled event is shown as not re-derived
// (the rules' re-decision, `questhall audit`, checks it) and its later draws are not compared.
// Every derivation is checked against the Python rules' own draws (tests/test_audit_viewer.py).
// Source: issue 19; services/kernel/chance.py for the draws; each title's rules for the order.

import { ORBTALE, ORION, QOC, QUESTEROS_ORDER } from "./content.js";

const INDEX = new Map(QUESTEROS_ORDER.map((c, i) => [c, i]));
/** Cards sorted in deck.toml order (questeros.rules.canonical). */
const canonicalCards = (cards) => [...cards].sort((a, b) => (INDEX.get(a) ?? 1e9) - (INDEX.get(b) ?? 1e9));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const first = (a, b) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (!same(a[i], b[i])) return i;
  return -1;
};
function compare(what, recorded, derived) {
  const i = first(recorded, derived);
  if (i < 0) return "";
  return `${what}[${i}]: recorded ${JSON.stringify(recorded[i])}, the seed gives ${JSON.stringify(derived[i])}`;
}
const dice = (stream, n, sides = 6) => Array.from({ length: n }, () => stream.die(sides));

const QUESTEROS_HAND = 10;
const EROS_HAND = 5;

const questeros = {
  check: {
    "questeros.dealer_chosen": (b, s, _st, ctx) => compare("dealer", [b.dealer], [s.randbelow(ctx.seats)]),
    "questeros.hands_dealt": (b, s) => {
      const out = s.shuffle(canonicalCards([...b.hands.flat(), ...b.deck]));
      const hands = b.hands.map((_, i) => canonicalCards(out.slice(QUESTEROS_HAND * i, QUESTEROS_HAND * (i + 1))));
      return compare("hands", b.hands, hands) || compare("deck", b.deck, out.slice(QUESTEROS_HAND * b.hands.length));
    },
  },
};

const eros_quest = {
  fold: (st, b) => (b.type === "game_created" ? { ...st, practice: !!(b.options && b.options.practice) } : st),
  check: {
    "eros_quest.adventure_set_up": (b, s, st) => {
      if (st.practice) return compare("deck", b.deck, s.shuffle(canonicalCards(b.deck)));
      const out = s.shuffle(canonicalCards([...b.hand, ...b.deck]));
      return compare("hand", b.hand, canonicalCards(out.slice(0, EROS_HAND))) || compare("deck", b.deck, out.slice(EROS_HAND));
    },
    "eros_quest.discard_returned": (b, s) => (b.shuffled ? compare("cards", b.cards, s.shuffle(canonicalCards(b.cards))) : ""),
  },
};

const rebuilt = (b) => !!(b.drawing && b.drawing.rebuilt > 0);
const fate_deck = {
  check: {
    "fate_deck.session_opened": (b, s) => compare("deck", b.deck, s.shuffle(QUESTEROS_ORDER)),
    "fate_deck.die_rolled": (b, s) => compare("value", [b.value], [s.die(b.sides)]),
  },
  // A drawing that rebuilt the deck shuffled the handed-in pile, whose order the events do not keep.
  unmodeled: { "fate_deck.fate_assigned": rebuilt, "fate_deck.card_awarded": rebuilt, "fate_deck.reading_drawn": rebuilt },
};

/** quests_over_coffee.rules.setup: the quest deck (by the options), the items, environments, companions. */
function qocSetup(b, s, st, seats) {
  const o = st.options || {};
  let order;
  if (o.quest_board && (o.board_quests || []).length) order = s.shuffle(o.board_quests);
  else if (o.quest_board) {
    const chosen = [];
    for (const [stars, n] of QOC.board_counts) chosen.push(...s.shuffle(QOC.quests.filter((q) => q[1] === stars).map((q) => q[0])).slice(0, n));
    order = s.shuffle(chosen);
  } else order = s.shuffle(QOC.quests.map((q) => q[0])).slice(0, QOC.quests_per_game);
  const items = s.shuffle(QOC.items);
  const envs = o.environments ? s.shuffle(QOC.environments) : [];
  const comps = o.companions ? s.shuffle(QOC.companions) : [];
  return compare("deck", b.deck, order.slice(0, QOC.round_size)) || compare("face_up", b.face_up, order.slice(QOC.round_size))
    || compare("offers", b.offers, Array.from({ length: seats }, (_, i) => items.slice(2 * i, 2 * i + 2)))
    || compare("item_deck", b.item_deck, items.slice(2 * seats)) || compare("environment", [b.environment], [envs[0] ?? null])
    || compare("environments", b.environments, envs.slice(1)) || compare("companions", b.companions, comps);
}

const quests_over_coffee = {
  fold: (st, b) => {
    if (b.type === "game_created") return { ...st, options: b.options || {} };
    const out = Array.isArray(b.item_deck) ? { ...st, itemDeck: b.item_deck } : st;
    return b.type === "qoc.shop_left" ? { ...out, shopItems: b.items } : out;
  },
  check: {
    "qoc.set_up": (b, s, st, ctx) => qocSetup(b, s, st, ctx.seats),
    // An item whose effect rerolls every die draws them all again; other items draw nothing.
    "qoc.item_used": (b, s) => (QOC.reroll_items.includes(b.item) ? compare("dice", b.dice, dice(s, b.dice.length)) : ""),
    "qoc.rolled": (b, s) => {
      const want = [...b.pool.flat(), ...b.base, ...b.extra];
      return compare("dice (pool, base, extra)", want, dice(s, want.length));
    },
    "qoc.rerolled": (b, s) => compare("rerolled dice", b.indexes.map((i) => b.dice[i]), dice(s, b.indexes.length)),
    "qoc.help_paid": (b, s) => compare("rolled", b.rolled, dice(s, b.rolled.length)),
    "qoc.leader_rolled": (b, s) => compare("rolls", b.rolls.flat(), dice(s, b.rolls.flat().length)),
    "qoc.shop_opened": (b, s, st) => {
      const prices = compare("prices", b.prices, dice(s, b.prices.length));
      if (prices) return prices;
      const deck = s.shuffle(st.itemDeck || []);
      const items = b.items.map(() => (deck.length ? deck.shift() : null));
      return compare("items", b.items, items) || compare("item_deck", b.item_deck, deck);
    },
    // Shop 6: the deck and the unsold items (as the shop_left just before says) shuffled together.
    "qoc.shop_closed": (b, s, st) => compare("item_deck", b.item_deck,
      s.shuffle([...(st.itemDeck || []), ...(st.shopItems || []).filter((x) => x !== null)])),
  },
};

const hexDistance = (a, b) => (Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[0] - b[0] + a[1] - b[1])) / 2;
const sameCell = (a, b) => a[0] === b[0] && a[1] === b[1];
/** The cells (row order) that may take the next token of `kind` (orion_duel.rules.token_cells). */
function tokenCells(g, bh, kind) {
  return ORION.cells.filter((c) => !g.some((x) => sameCell(x, c)) && !bh.some((x) => sameCell(x, c)) && (kind === "galaxy"
    ? g.every((x) => hexDistance(c, x) >= ORION.galaxy_spacing)
    : bh.every((x) => hexDistance(c, x) >= ORION.black_hole_spacing) && g.every((x) => hexDistance(c, x) >= ORION.black_hole_galaxy_spacing)));
}
/** orion_duel.rules.random_tokens: each token uniform among the cells still legal; a dead end restarts. */
function randomTokens(s) {
  const draws = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const g = [], bh = [];
    let ok = true;
    for (const [kind, n, list] of [["galaxy", ORION.galaxies, g], ["black_hole", ORION.black_holes, bh]]) {
      for (let i = 0; i < n && ok; i++) {
        const cand = tokenCells(g, bh, kind);
        if (!cand.length) { ok = false; break; }
        const k = s.randbelow(cand.length);
        draws.push(k);
        list.push(cand[k]);
      }
      if (!ok) break;
    }
    if (ok) return { g, bh, draws };
  }
  return { g: [], bh: [], draws };
}
const orion_duel = {
  fold: (st, b) => (b.type === "game_created" ? { ...st, firstSeat: b.options ? b.options.first_seat ?? null : null }
    : b.type === "orion_duel.starter_chosen" ? { ...st, starters: (st.starters || 0) + 1 } : st),
  check: {
    "orion_duel.roles_assigned": (b, s) => (b.by_chance ? compare("galaxy_seat", [b.galaxy_seat], [Number(s.coin())]) : ""),
    "orion_duel.tokens_placed": (b, s) => {
      if (b.mode !== "random") return "";
      const t = randomTokens(s);
      return compare("draws", b.draws, t.draws) || compare("galaxies", b.galaxies, t.g) || compare("black_holes", b.black_holes, t.bh);
    },
    // The first game's starter is a coin unless the option names it; a match's next game
    // alternates, and a manual setup's galaxy player chooses (no chance).
    "orion_duel.starter_chosen": (b, s, st) => (b.chooser === null && !st.starters && st.firstSeat === null
      ? compare("seat", [b.seat], [Number(s.coin())]) : ""),
  },
};

const reventure_orbtale = {
  check: {
    // reventure_orbtale.rules.setup: the treasure cards but orbs shuffled, the orbs shuffled into
    // its top half, the heroes shuffled, the token drawn, 3 cards each from the token holder on,
    // then the two chapter decks shuffled.
    "reventure_orbtale.game_set_up": (b, s, _st, ctx) => {
      const rest = s.shuffle(ORBTALE.pack), half = Math.floor(rest.length / 2);
      let deck = [...s.shuffle([...rest.slice(0, half), ...ORBTALE.orbs]), ...rest.slice(half)];
      const heroes = s.shuffle(ORBTALE.heroes), token = s.randbelow(ctx.seats);
      const inv = Array.from({ length: ctx.seats }, () => []);
      for (let i = 0; i < ctx.seats; i++) inv[(token + i) % ctx.seats] = deck.slice(3 * i, 3 * i + 3);
      deck = deck.slice(3 * ctx.seats);
      const chapters = [s.shuffle(ORBTALE.who), s.shuffle(ORBTALE.what)];
      return compare("token", [b.token], [token]) || compare("deck", b.deck, deck) || compare("inventories", b.inventories, inv)
        || compare("heroes", b.heroes, inv.map((_, i) => heroes.slice(3 * i, 3 * i + 3))) || compare("chapter_decks", b.chapter_decks, chapters);
    },
    "reventure_orbtale.chapter_decks_shuffled": (b, s) => compare("order", b.order, s.shuffle([...b.order].sort())),
  },
  // A reshuffled discard pile, a random discard and a theft draw over the piles' and inventories'
  // order, which the events do not carry whole: the rules re-decide them.
  unmodeled: {
    "reventure_orbtale.deck_reshuffled": () => true, "reventure_orbtale.cards_discarded": () => true,
    "reventure_orbtale.cards_stolen": () => true,
  },
};

export const TITLES = { questeros, eros_quest, fate_deck, quests_over_coffee, orion_duel, reventure_orbtale };

/**
 * The chance derivation of a title, or null for a title this file does not know. The function
 * takes {stream (ChanceStream at the command's version, null while the seed is secret), bodies
 * (the command's event bodies), seats, state} and returns {state, checked (every draw of the
 * command re-derived), drew (it drew at all), mismatch: [event index, reason] | null, notes}.
 */
export function deriveChance(title) {
  const spec = TITLES[title];
  if (!spec) return null;
  return (ctx) => {
    let state = ctx.state || {}, mismatch = null, stopped = false, drew = false;
    const notes = [];
    ctx.bodies.forEach((b, j) => {
      if (ctx.stream && !mismatch && !stopped) {
        const un = spec.unmodeled && spec.unmodeled[b.type];
        if (un && un(b, state)) {
          stopped = true;
          notes.push(`event ${ctx.versionBefore + 1 + j} (${b.type}) draws by rules this page does not re-run: re-decided by questhall audit`);
        } else if (spec.check && spec.check[b.type]) {
          const before = ctx.stream.draws.length;
          const why = spec.check[b.type](b, ctx.stream, state, ctx);
          if (ctx.stream.draws.length > before) drew = true;
          for (const d of ctx.stream.draws.slice(before)) d.event = ctx.versionBefore + 1 + j;
          if (why) mismatch = [j, why];
        }
      }
      state = spec.fold ? spec.fold(state, b) : state;
    });
    return { state, checked: drew && !stopped, drew, stopped, mismatch, notes };
  };
}
