// What the tab keeps (sessionStorage: this tab only, gone when it closes): per game the seat and
// its token from the join, the highest version received and the last FEED_KEEP feed lines, so a
// reload shows the game at once and resumes the socket with `since` where it left off.

export const FEED_KEEP = 200;
const PREFIX = "questhall.game.";
const MAX_GAMES = 20;

function key(gameId) { return PREFIX + gameId; }

/** The tab's record of a game: {seat, token, name, version, feed: [{version, text, kind}]} or a blank one. */
export function load(gameId) {
  try {
    const raw = sessionStorage.getItem(key(gameId));
    if (raw) return { seat: null, token: null, name: "", version: 0, feed: [], ...JSON.parse(raw) };
  } catch { /* unreadable: start blank */ }
  return { seat: null, token: null, name: "", version: 0, feed: [] };
}

export function save(gameId, rec) {
  const out = { ...rec, feed: rec.feed.slice(-FEED_KEEP), at: Date.now() };
  try {
    sessionStorage.setItem(key(gameId), JSON.stringify(out));
  } catch {
    prune(0);
    try { sessionStorage.setItem(key(gameId), JSON.stringify(out)); } catch { /* storage full: keep going in memory */ }
  }
  prune(MAX_GAMES);
}

/** The games this tab holds a seat in, newest first: [{gameId, seat, name}]. */
export function seats() {
  const out = [];
  for (let i = 0; i < sessionStorage.length; i++) {
    const k = sessionStorage.key(i);
    if (!k.startsWith(PREFIX)) continue;
    try {
      const r = JSON.parse(sessionStorage.getItem(k));
      if (r.token) out.push({ gameId: k.slice(PREFIX.length), seat: r.seat, name: r.name, at: r.at || 0 });
    } catch { /* skip */ }
  }
  return out.sort((a, b) => b.at - a.at);
}

function prune(keep) {
  const recs = [];
  for (let i = 0; i < sessionStorage.length; i++) {
    const k = sessionStorage.key(i);
    if (!k.startsWith(PREFIX)) continue;
    let at = 0;
    try { at = JSON.parse(sessionStorage.getItem(k)).at || 0; } catch { /* oldest */ }
    recs.push([at, k]);
  }
  recs.sort((a, b) => b[0] - a[0]);
  for (const [, k] of recs.slice(keep)) sessionStorage.removeItem(k);
}
