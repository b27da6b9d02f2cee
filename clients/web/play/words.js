// The event feed and the legal commands in words. Lifecycle events here; each title's own
// events and commands in its board module (boards/<title>.js: eventText, commandText), with a
// generic fallback (the tag's words and the fields) for anything a module does not name.

export function seatName(ctx, s) {
  if (s === null || s === undefined) return "nobody";
  const info = ctx.seats?.[s];
  return info?.name ? info.name : `seat ${s}`;
}

/** A result's summary with the players' names: the rules store "Seat 1 wins" and "Seats [0, 2]
 * share" (the audit re-decides that text), the page says "Bob wins" and "Ann and Cid share"
 * (as the chat's kit.named_summary); "1 victory conditions" reads "1 victory condition". */
export function namedSummary(summary, ctx) {
  const name = (s) => ctx?.seats?.[s]?.name || null;
  const several = (list) => {
    const who = list.split(", ").map((x) => name(Number(x)) || `seat ${x}`);
    return who.length > 1 ? `${who.slice(0, -1).join(", ")} and ${who[who.length - 1]}` : who[0];
  };
  return String(summary || "")
    .replace(/\bSeats \[(\d+(?:, \d+)*)\]/g, (_, list) => several(list))
    .replace(/\bSeat (\d+)\b/g, (m, s) => name(Number(s)) || m)
    .replace(/\b1 victory conditions\b/g, "1 victory condition");
}

function humanTag(type) {
  const t = type.includes(".") ? type.split(".").slice(1).join(".") : type;
  return t.replace(/_/g, " ");
}

function fieldText(v) {
  if (v === null || v === undefined) return "none";
  if (Array.isArray(v)) return v.length ? v.map(fieldText).join(", ") : "none";
  if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${k} ${fieldText(x)}`).join(", ");
  return String(v);
}

/** Generic words of a tagged body (event or command): "bid made: seat Ann, quests 3". */
export function generic(body, ctx) {
  const parts = [];
  for (const [k, v] of Object.entries(body)) {
    if (k === "type" || (Array.isArray(v) && v.length > 8) || (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 6)) continue;
    if (k === "seat" || k === "target" || k === "winner") parts.push(`${k.replace(/_/g, " ")} ${seatName(ctx, v)}`);
    else parts.push(`${k.replace(/_/g, " ")} ${fieldText(v)}`);
  }
  return humanTag(body.type) + (parts.length ? ": " + parts.join("; ") : "");
}

const LIFECYCLE = {
  game_created: (b) => `Game created with ${b.seats} seats.`,
  seat_joined: (b) => `${b.name} takes seat ${b.seat}.`,
  seat_left: (b) => `Seat ${b.seat} is free again.`,
  game_started: () => "The game starts.",
  game_abandoned: (b, c) => (b.seat !== null && b.seat !== undefined ? `${seatName(c, b.seat)} abandons the game.` : `The game ends with no result${b.reason ? ": " + b.reason : "."}`),
  seat_forfeited: (b, c) => `${seatName(c, b.seat)} forfeits.`,
  abandon_agreed: (b, c) => `${seatName(c, b.seat)} agrees to end the game with no result.`,
  game_finished: (b, c) => `Game over: ${namedSummary(b.result?.summary, c).replace(/\.$/, "") || "finished"}.`,
  seed_revealed: () => "The seed is revealed: anyone can audit the game now.",
  clock_updated: () => null,
  timed_out: (b, c) => `${seatName(c, b.seat)} ran out of time (${String(b.action || "").replace(/_/g, " ")}).`,
  seat_absent: (b, c) => `${seatName(c, b.seat)} is marked absent.`,
  // A seat joined as a bot has its seat_joined line already: only a takeover (a timeout) gets one.
  seat_botted: (b, c) => (b.takeover ? `A bot (${b.bot}) takes over ${seatName(c, b.seat)}: ${b.reason}` : null),
  undo_point: () => null,
  undo_requested: (b, c) => `${seatName(c, b.seat)} asks to take back the last move.`,
  undo_accepted: (b, c) => `${seatName(c, b.seat)} accepts the take-back.`,
  undo_refused: (b, c) => `${seatName(c, b.seat)} refuses the take-back.`,
  undone: (b, c) => `${seatName(c, b.seat)}'s last move is taken back.`,
};

/** One feed entry's body in words, or null for bookkeeping events not worth a line. */
export function eventText(body, ctx) {
  return eventWords(body, ctx)[0];
}

/** [words or null, false when only the generic fallback knew the event]. */
export function eventWords(body, ctx) {
  const f = LIFECYCLE[body.type];
  if (f) return [f(body, ctx), true];
  const own = ctx.board?.eventText?.(body, ctx);
  if (own !== undefined) return [own, true];
  return [generic(body, ctx), false];
}

/** A legal command in words (the label of its button). */
export function commandText(cmd, ctx) {
  return commandWords(cmd, ctx)[0];
}

/** [words, false when only the generic fallback knew the command]. */
export function commandWords(cmd, ctx) {
  const own = ctx.board?.commandText?.(cmd, ctx);
  if (own !== undefined && own !== null) return [own, true];
  return [generic(cmd, ctx), false];
}
