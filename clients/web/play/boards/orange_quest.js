// Orange Quest (docs/games/orange_quest.md): the day, the location and its signposts, the boss
// with its health and each player's damage, the players (hero, hand and candy counts, equipment,
// curses, trophies), the response window's chain with Block and pass, a duel, a reward being
// shared (the pool, a proposal, who has picked in secret, your own pick), a duel winner's gift,
// your hand (click a card to play it when it has one legal play) and your Treasure aside.
// Candy is a count only: which cards became candy is secret from everyone (the server never
// sends it). Card, hero, boss and location names from the title's content.

import { h } from "../dom.js";
import { seatName } from "../words.js";

const cache = new WeakMap();
function index(content) {
  let m = cache.get(content);
  if (!m) {
    const by = (list) => new Map((list || []).map((x) => [x.id, x]));
    m = { cards: by(content?.cards?.card), heroes: by(content?.heroes?.hero), bosses: by(content?.bosses?.boss),
          locations: by(content?.locations?.location) };
    cache.set(content, m);
  }
  return m;
}
const baseOf = (id) => String(id).replace(/\d+$/, "");
const design = (ctx, id) => index(ctx.content).cards.get(baseOf(id)) || null;
const cname = (ctx, id) => design(ctx, id)?.name || String(id);
const hero = (ctx, id) => index(ctx.content).heroes.get(id) || null;
const boss = (ctx, id) => index(ctx.content).bosses.get(id) || null;
const place = (ctx, id) => index(ctx.content).locations.get(id) || null;
const words = (id) => String(id || "").replace(/_/g, " ");
const signpost = (id) => words(id).replace(/\b\w/g, (c) => c.toUpperCase());
const list = (xs) => (xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function zone(ctx, z) {
  const [kind, owner] = String(z).split(":");
  const who = owner !== undefined ? seatName(ctx, Number(owner)) : "";
  return { deck: "the deck", discard: "the discard pile", table: "the table", centre: "the centre",
           hand: `${who}'s hand`, stash: `${who}'s candy stash`, equip: `${who}'s equipment`, curse: `a curse on ${who}`,
           aside: `${who}'s aside` }[kind] || String(z);
}

function cardEl(ctx, id, opts = {}) {
  const d = design(ctx, id);
  const cls = `card oq ${d?.frame || ""} ${d?.icon || ""}` + (opts.cmd ? " playable move" : "") + (opts.used ? " used" : "");
  const attrs = { class: cls, dataset: { card: id }, title: d?.text || id };
  if (opts.cmd) {
    attrs.role = "button";
    attrs.tabindex = 0;
    attrs.dataset.type = opts.cmd.type;
    attrs.on = { click: () => ctx.send(opts.cmd), keydown: (e) => { if (e.key === "Enter" || e.key === " ") ctx.send(opts.cmd); } };
  }
  return h("div", attrs, h("div", { class: "name" }, d?.name || id), h("div", { class: "text" }, d?.text || ""),
    opts.note ? h("div", { class: "text" }, opts.note) : null);
}
const cardRow = (ctx, ids, opts = () => ({})) => h("div", { class: "cards" }, (ids || []).map((id) => cardEl(ctx, id, opts(id))));

/** The pool cards a distribution names seats for (the Treasure aside or the reward pool). */
function poolOf(ctx) {
  const v = ctx.view || {};
  return v.phase === "treasure" ? v.aside || [] : v.pool || [];
}

export function commandText(cmd, ctx) {
  const n = (id) => cname(ctx, id);
  const who = (s) => seatName(ctx, s);
  const v = ctx.view || {};
  const assign = (to) => {
    const pool = poolOf(ctx);
    return to.map((s, i) => `${pool[i] ? n(pool[i]) : `card ${i + 1}`} to ${who(s)}`).join(", ");
  };
  switch (cmd.type) {
    case "orange_quest.play": {
      const d = design(ctx, cmd.card);
      if (d?.effect === "block") {
        if (v.chain?.length) {
          const top = v.chain[v.chain.length - 1];
          return `Block ${who(top.seat)}'s ${n(top.card)}`;
        }
        return `Block: destroy ${who(cmd.target)}'s ${n(cmd.item)}`;
      }
      return `Play ${n(cmd.card)}${cmd.target !== null && cmd.target !== undefined ? ` on ${who(cmd.target)}` : ""}`;
    }
    case "orange_quest.pass":
      if (v.chain?.length) return "Pass (no Block)";
      if (v.phase === "share") return "Refuse: no agreement";
      if (v.phase === "gift") return "Give nothing more";
      return v.phase === "party" ? "End my party turn" : "Pass";
    case "orange_quest.convert": return `Turn ${list(cmd.cards.map(n))} into candy`;
    case "orange_quest.use_ability": {
      const hr = hero(ctx, v.players?.[ctx.seat]?.hero);
      return `Use ${hr?.name || "your hero"}'s ability${cmd.card ? ` (discard ${n(cmd.card)})` : ""}`;
    }
    case "orange_quest.use_equipment": return `Use ${n(cmd.card)}`;
    case "orange_quest.challenge": return `Challenge ${who(cmd.target)} to a duel`;
    case "orange_quest.distribute": return `Hand out: ${assign(cmd.to)}`;
    case "orange_quest.propose": return `Propose: ${assign(cmd.to)}`;
    case "orange_quest.accept": return "Accept the proposal";
    case "orange_quest.give_candies": return `Give ${who(cmd.to)} ${plural(cmd.count, "candy", "candies")} of those you won`;
    case "orange_quest.give_card": return `Pass ${n(cmd.card)} on (Fog of Generosity, secret)`;
    case "orange_quest.put_in": return `Put ${list(cmd.cards.map(n))} in the centre (Chaos, secret)`;
    case "orange_quest.throw": return `Throw ${cmd.shape} for ${n(cmd.card)} (secret)`;
    case "orange_quest.pick": return `Take ${n(cmd.card)} (secret)`;
    default: return undefined;
  }
}

function movedText(b, ctx) {
  const who = (s) => seatName(ctx, s);
  const [fk, fo] = b.frm.split(":"), [tk, to] = b.to.split(":");
  const cards = b.cards?.length ? `: ${list(b.cards.map((c) => cname(ctx, c)))}` : "";
  const why = b.reason ? ` (${words(b.reason)})` : "";
  if (fk === "deck" && tk === "hand") return `${who(Number(to))} takes ${plural(b.count, "card")}${cards}${why}.`;
  if (fk === "deck" && tk === "stash") return `${who(Number(to))} gains ${plural(b.count, "candy", "candies")}${why}.`;
  if (fk === "stash" && tk === "discard") return `${who(Number(fo))} loses ${plural(b.count, "candy", "candies")}${why}.`;
  if (fk === "stash" && tk === "stash") return `${who(Number(fo))} gives ${who(Number(to))} ${plural(b.count, "candy", "candies")}${why}.`;
  if (fk === "hand" && tk === "stash") return `${who(Number(fo))} turns ${plural(b.count, "card")} into candy${why}.`;
  if (fk === "equip" && tk === "stash") return `${who(Number(fo))}'s ${plural(b.count, "equipment card")} become candy${why}.`;
  if (fk === "table" && tk === "discard") return null;  // the played and spent cards go away: no line
  return `${plural(b.count, "card")} from ${zone(ctx, b.frm)} to ${zone(ctx, b.to)}${cards}${why}.`;
}

export function eventText(b, ctx) {
  const who = (s) => seatName(ctx, s);
  const n = (id) => cname(ctx, id);
  switch (b.type) {
    case "orange_quest.game_set_up": return `The journey is set up: ${b.days} days; ${list(b.heroes.map((x, i) => `${who(i)} is ${hero(ctx, x)?.name || x}`))}; ${who(b.first)} goes first.`;
    case "orange_quest.moved": return movedText(b, ctx);
    case "orange_quest.reshuffled": return `The discard pile is shuffled into a new deck (${b.count} cards).`;
    case "orange_quest.coin_flipped": return `${who(b.seat)} flips the coin: ${b.heads ? "heads" : "tails"} (${words(b.reason)}).`;
    case "orange_quest.day_started": return `Day ${b.day} begins; ${who(b.first)} is the first player.`;
    case "orange_quest.location_revealed": return `The party reaches ${place(ctx, b.location)?.name || words(b.location)}: ${b.signposts.map(signpost).join(", ")}.`;
    case "orange_quest.signpost_applied": {
      const s = signpost(b.signpost);
      if (b.signpost === "rage") return `${s}: the boss gets +${b.value} health.`;
      if (b.signpost === "fog_of_generosity") return b.value ? `${s}: everyone passes a card to the ${b.value > 0 ? "left" : "right"}, in secret.` : `${s}: nobody holds a card.`;
      if (b.signpost === "loss_of_losses") return `${s}: each player loses a random card.`;
      if (b.signpost === "candy_madness") return `${s}: compared with ${who(b.value)}.`;
      return `${s}.`;
    }
    case "orange_quest.hero_turned": return `${who(b.seat)}'s hero is turned (${words(b.reason)}).`;
    case "orange_quest.ability_used": return `${who(b.seat)} uses ${hero(ctx, b.hero)?.name || b.hero}'s ability.`;
    case "orange_quest.equipment_used": return `${who(b.seat)} uses ${n(b.card)}.`;
    case "orange_quest.card_played": return `${who(b.seat)} plays ${n(b.card)}${b.target !== null && b.target !== undefined ? ` on ${who(b.target)}` : ""}${b.item ? ` (${n(b.item)})` : ""}${b.helps !== null && b.helps !== undefined ? `, helping ${who(b.helps)}` : ""}.`;
    case "orange_quest.passed": return `${who(b.seat)} passes.`;
    case "orange_quest.chain_resolved": return `The response window closes: ${b.cards.map((c, i) => `${n(c)} ${b.applies[i] ? "applies" : "is blocked"}`).join(", ")}.`;
    case "orange_quest.modified": return `${who(b.seat)}'s damage +${b.amount} (${words(b.reason)}).`;
    case "orange_quest.curse_triggered": return `The curse ${n(b.card)} strikes ${who(b.seat)}.`;
    case "orange_quest.candies_kept": return `${who(b.seat)} keeps ${plural(b.count, "candy", "candies")} (Joy).`;
    case "orange_quest.boss_revealed": return `The boss ${boss(ctx, b.boss)?.name || b.boss} appears with ${b.health} health; the fight begins.`;
    case "orange_quest.fight_ended": return b.won
      ? `The boss is defeated${b.leader !== null && b.leader !== undefined ? `; ${who(b.leader)} leads` : " (a tie for the lead)"}.`
      : "The boss wins: everyone loses 2 candies.";
    case "orange_quest.trophy_taken": return `${who(b.seat)} takes ${boss(ctx, b.boss)?.name || b.boss} as a trophy.`;
    case "orange_quest.sharing_started": return `${list(b.seats.map(who))} share ${plural(b.pool.length, "card")} (${words(b.variant)}${b.stage > 1 ? `, stage ${b.stage}` : ""}).`;
    case "orange_quest.stage": return null;  // the day's program moving on: the phase shows it
    case "orange_quest.others_reward": return `${who(b.distributor)} hands out ${plural(b.pool.length, "card")} to ${list(b.seats.map(who))}.`;
    case "orange_quest.treasure_started": return `${list(b.givers.map(who))} hand out the Treasure.`;
    case "orange_quest.proposed": return `${who(b.seat)} proposes a split.`;
    case "orange_quest.proposal_accepted": return `${who(b.seat)} accepts the proposal.`;
    case "orange_quest.agreement_failed": return `${who(b.seat)} refuses: no agreement, the pool is discarded.`;
    case "orange_quest.chosen": return b.choice ? `You choose in secret: ${commandText(b.choice, ctx)}.` : `${who(b.seat)} has chosen.`;
    case "orange_quest.revealed": {
      const shown = (b.choices || []).filter((x) => x.choice).map((x) => `${who(x.seat)}: ${commandText(x.choice, ctx)}`);
      return shown.length ? `Revealed: ${shown.join("; ")}.` : "The secret choices are revealed.";
    }
    case "orange_quest.party_started": return `The party begins; ${who(b.turn)} starts.`;
    case "orange_quest.turn_started": return `${who(b.seat)}'s turn.`;
    case "orange_quest.duel_started": return `${who(b.challenger)} challenges ${who(b.challenged)} to a duel.`;
    case "orange_quest.duel_ended": return b.winner !== null && b.winner !== undefined
      ? `Duel: ${who(b.winner)} wins ${plural(b.taken, "candy", "candies")} (${b.damage.join(" to ")}).` : `Duel: a draw (${b.damage.join(" to ")}).`;
    case "orange_quest.giving_opened": return `${who(b.winner)} may give ${list(b.helpers.map(who))} up to ${plural(b.count, "candy", "candies")} won.`;
    case "orange_quest.candies_given": return `${who(b.seat)} gives ${who(b.to)} ${plural(b.count, "candy", "candies")}.`;
    case "orange_quest.giving_closed": return `${who(b.winner)} is done giving (${b.given} given).`;
    case "orange_quest.party_ended": return "The party is over.";
    case "orange_quest.game_ended": return `The journey ends: ${b.scores.map((x, i) => `${who(i)} ${x}`).join(", ")}; ${list(b.winners.map(who))} ${b.winners.length > 1 ? "share the victory" : "wins"}.`;
    default: return undefined;
  }
}

const PHASES = { fog: "Fog of Generosity", chaos: "Chaos", treasure: "Treasure", fight: "boss fight", share: "sharing the reward",
                 others: "the others' reward", party: "party", duel: "duel", gift: "a duel winner's gift", over: "over" };

export function render(ctx) {
  const v = ctx.view;
  const env = ctx.env;
  const legal = ctx.myTurn && !ctx.busy ? v.legal || [] : [];
  const who = (s) => seatName(ctx, s);
  // a hand card is clickable when it has exactly one legal command (a play without a choice of target, a secret pick)
  const one = new Map();
  for (const c of legal) {
    const id = c.card || (c.cards && c.cards.length === 1 ? c.cards[0] : null);
    if (!id || c.type === "orange_quest.use_equipment" || c.type === "orange_quest.use_ability") continue;
    one.set(id, one.has(id) ? null : c);
  }
  const clickable = (id) => ({ cmd: one.get(id) || undefined });
  const loc = v.location ? place(ctx, v.location) : null;
  const flags = [v.sacred_place && "no duels today", v.breakage && "equipment broken today", v.powerlessness && "no hero abilities today"].filter(Boolean);
  const head = h("p", { id: "oq-day" }, `Day ${v.day} of ${v.days} · ${PHASES[v.phase] || "the day goes on"} · first player ${who(v.first)} · deck ${v.deck_count} · discard ${v.discard_count} · bosses left ${v.bosses_left}`);
  const where = h("div", { class: "zone", id: "oq-location" }, h("div", { class: "label" }, "Location"),
    loc ? h("p", {}, h("b", {}, loc.name), " · signposts: ", v.signposts.map(signpost).join(" → "), flags.length ? ` · ${flags.join(", ")}` : "") : h("p", { class: "muted" }, "not revealed yet"));
  const b = v.boss ? boss(ctx, v.boss) : null;
  const dealt = v.players.reduce((a, p) => a + p.damage, 0);
  const fight = b ? h("div", { class: "zone", id: "oq-boss" }, h("div", { class: "label" }, "Boss"),
    h("p", {}, h("b", {}, b.name), v.phase === "fight" ? ` · health ${v.boss_health} · damage dealt ${dealt}${dealt >= v.boss_health ? " (enough)" : ""}` : "",
      ` · trophy ${b.trophy}`, v.phase === "fight" && v.turn !== null ? ` · ${who(v.turn)} to play` : "")) : null;
  const players = h("table", { class: "scores", id: "oq-players" },
    h("tr", {}, ["seat", "hero", "hand", "candies", "equipment", "curses", "trophies", v.phase === "fight" || v.phase === "duel" ? "damage" : null].filter(Boolean).map((x) => h("th", {}, x))),
    v.players.map((p, i) => h("tr", { class: v.turn === i ? "moving" : "", dataset: { seat: i } },
      h("td", {}, who(i), i === v.first ? " ★" : "", v.turn === i ? " ← turn" : ""),
      h("td", { title: hero(ctx, p.hero)?.text || "" }, hero(ctx, p.hero)?.name || p.hero, p.hero_turned ? " (turned)" : ""),
      h("td", {}, String(p.hand_count)), h("td", { class: "candies" }, String(p.candies)),
      h("td", {}, p.equipment.map((e) => cname(ctx, e) + (p.equipment_used.includes(e) ? " (used)" : "")).join(", ") || "-"),
      h("td", {}, p.curses.map((c) => cname(ctx, c)).join(", ") || "-"),
      h("td", {}, p.trophies.map((t) => boss(ctx, t)?.name || t).join(", ") || "-"),
      v.phase === "fight" || v.phase === "duel" ? h("td", {}, String(p.damage)) : null)));
  const windowBox = v.chain?.length ? h("div", { class: "zone", id: "oq-window" }, h("div", { class: "label" }, "Response window (bottom first)"),
    h("ol", { class: "plain" }, v.chain.map((x) => h("li", {}, `${who(x.seat)}: ${cname(ctx, x.card)}${x.target !== null && x.target !== undefined ? ` on ${who(x.target)}` : ""}${x.item ? ` (${cname(ctx, x.item)})` : ""}`))),
    h("p", { class: "muted" }, `Waiting for ${list(v.window_waiting.map(who)) || "nobody"} to Block or pass.`),
    h("div", { class: "move-list" }, legal.filter((c) => c.type === "orange_quest.pass" || (c.type === "orange_quest.play" && design(ctx, c.card)?.effect === "block"))
      .map((c) => h("button", { type: "button", class: "move", dataset: { type: c.type }, on: { click: () => ctx.send(c) } }, commandText(c, ctx))))) : null;
  const duel = v.duel?.length === 2 ? h("div", { class: "zone", id: "oq-duel" }, h("div", { class: "label" }, "Duel"),
    h("p", {}, `${who(v.duel[0])} (${v.players[v.duel[0]].damage}) against ${who(v.duel[1])} (${v.players[v.duel[1]].damage})${v.turn !== null ? ` · ${who(v.turn)} to play` : ""}`)) : null;
  const chosen = env.chosen || [];
  const share = v.sharing ? h("div", { class: "zone", id: "oq-share" }, h("div", { class: "label" }, v.sharing === "others" ? `The others' reward: ${who(v.distributor)} hands it out` : `Sharing the reward (${words(v.sharing)})`),
    h("p", {}, `Between ${list(v.share_seats.map(who))}.`, v.sharing === "rps" || v.sharing === "take" ? ` Chosen in secret: ${list(chosen.map(who)) || "nobody yet"}.` : ""),
    cardRow(ctx, v.pool, clickable),
    v.proposer !== null && v.proposer !== undefined ? h("p", {}, `${who(v.proposer)} proposes: ${v.proposal.map((s, i) => `${cname(ctx, v.pool[i])} to ${who(s)}`).join(", ")}; accepted by ${list(v.accepted.map(who))}.`) : null) : null;
  const secret = v.phase === "fog" || v.phase === "chaos" ? h("p", { id: "oq-secret" }, `${PHASES[v.phase]}: chosen in secret so far: ${list(chosen.map(who)) || "nobody"}.`) : null;
  const gift = v.gift_giver !== null && v.gift_giver !== undefined ? h("p", { id: "oq-gift" }, `${who(v.gift_giver)} may give ${list(v.gift_helpers.map(who))} up to ${plural(v.gift_left, "candy", "candies")} won in the duel.`) : null;
  const table = v.table?.length && !v.sharing ? h("div", { class: "zone" }, h("div", { class: "label" }, "On the table"), cardRow(ctx, v.table)) : null;
  const mine = ctx.seat === null ? null : h("div", {},
    h("div", { class: "zone hand", id: "oq-hand" }, h("div", { class: "label" }, `Your hand (${v.hand.length}, limit 7)${one.size ? ` · highlighted: click to ${(v.convert || []).includes(ctx.seat) ? "turn it into candy" : "play or choose it"}` : ""}`), cardRow(ctx, v.hand, clickable)),
    v.aside?.length ? h("div", { class: "zone", id: "oq-aside" }, h("div", { class: "label" }, "Your Treasure to hand out"), cardRow(ctx, v.aside)) : null,
    h("p", { class: "muted" }, `Your candy stash: ${v.players[ctx.seat]?.candies ?? 0} (face down: nobody sees which cards became candy).`),
    env.my_choice ? h("p", { class: "muted" }, `Your secret choice: ${commandText(env.my_choice, ctx) || env.my_choice.type}`) : null);
  const result = v.winners?.length ? h("p", { class: "result" }, `${list(v.winners.map(who))} ${v.winners.length > 1 ? "share the victory" : "wins"} (${v.scores.map((x, i) => `${who(i)} ${x}`).join(", ")})`) : null;
  return h("div", { class: "orange-quest" }, head, where, fight, players, windowBox, duel, share, secret, gift, table, mine, result);
}
