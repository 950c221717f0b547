// The answers of a static site written by `chomp site`: the tables read in
// the browser by the JavaScript reader (chomp-tables.js, HTTP range requests,
// every byte checked against the manifest before it answers). app.js loads
// this module when the page is a static site.
//
// Only the level that reads the tables plays here: very hard, the same rule as
// the server's player (src/play/mod.rs), move for move with the same seed: a
// winning move drawn uniformly when one exists; from a loss, the moves leaving
// the opponent the fewest winning replies, then the most tiles, one drawn
// uniformly. The draws use the server's generator (SplitMix64 seeded with
// seed ^ 0x63686f6d7020706c), so a seed gives the same game on both.
import { conjugate, openTables } from "./chomp-tables.js";

const config = await (async () => {
  const r = await fetch("site.json", { cache: "no-cache" });
  if (!r.ok) throw new Error(`site.json: HTTP ${r.status}`);
  return r.json();
})();

const opened = new Map(); // name -> Promise of the opened tables
function open(t) {
  if (!opened.has(t.name)) {
    const url = new URL(t.url, document.baseURI).href;
    const p = openTables(url, t.pack ? { manifestSha256: t.manifest_sha256, pack: t.pack } : { manifestSha256: t.manifest_sha256 });
    p.catch(() => opened.delete(t.name)); // a failed open is tried again next time
    opened.set(t.name, p);
  }
  return opened.get(t.name);
}

const tilesOf = (p) => p.reduce((a, b) => a + b, 0);
function fits(t, p) {
  const n = tilesOf(p);
  return n <= t.levels_complete && (t.tiles == null || n <= t.tiles) && (t.rows == null || p.length <= t.rows) && (t.cols == null || p[0] <= t.cols);
}
// The first listed table directory that holds p (or its transpose).
function tableFor(p) {
  const t = config.tables.find((t) => fits(t, p) || fits(t, conjugate(p)));
  if (!t) throw new Error(`no table on this site holds ${p.join(" ")}`);
  return t;
}

// The reads of every query, for the debug panel and for tests.
performance.setResourceTimingBufferSize?.(1e6);
const log = [];
function show(entry) {
  log.push(entry);
  const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
  const line = (e) => `${e.position.join(" ")} (${e.table}): ${e.ms.toFixed(1)} ms, ${e.requests} requests, ${kib(e.bytes)} read, ${kib(e.transfer)} transferred`;
  const el = document.getElementById("debug-log");
  if (el) el.textContent = log.slice(-12).reverse().map(line).join("\n");
}

// Answers p as `chomp query --json` does (from the table directory t of
// site.json, by default the first that holds p), and records what it read.
async function query(p, t = tableFor(p)) {
  const t0 = performance.now();
  const before = performance.getEntriesByType("resource").length;
  const tables = await open(t);
  const s0 = tables.stats();
  const answer = await tables.query(p);
  const ms = performance.now() - t0;
  const s1 = tables.stats();
  const base = new URL(t.url, document.baseURI).href;
  const transfer = performance
    .getEntriesByType("resource")
    .slice(before)
    .filter((e) => e.name.startsWith(base))
    .reduce((a, e) => a + (e.transferSize || e.encodedBodySize || 0), 0);
  show({ position: p, table: t.name, ms, requests: s1.requests - s0.requests, bytes: s1.bytesRead - s0.bytesRead, transfer });
  return answer;
}

// SplitMix64, as src/rng.rs.
function generator(seed) {
  const M = (x) => BigInt.asUintN(64, x);
  let s = M(BigInt(seed) ^ 0x6368_6f6d_7020_706cn);
  return {
    below(n) {
      s = M(s + 0x9e37_79b9_7f4a_7c15n);
      let z = s;
      z = M((z ^ (z >> 30n)) * 0xbf58_476d_1ce4_e5b9n);
      z = M((z ^ (z >> 27n)) * 0x94d0_49bb_1331_11ebn);
      z ^= z >> 31n;
      return Number((z * BigInt(n)) >> 64n);
    },
  };
}

async function play(p, level, seed) {
  if (level !== "very-hard") throw new Error(`level ${level} needs the server (chomp serve): this static site plays very hard`);
  const rng = generator(seed);
  const answer = await query(p);
  // Every move in the player's order: cells row by row, (0, 0) excluded.
  const moves = [];
  p.forEach((len, r) => { for (let c = 0; c < len; c++) if (r || c) moves.push([r, c]); });
  if (moves.length === 0) throw new Error("the game is over: only the poisoned square is left");
  // The answer lists every move with the position it leads to.
  const child = new Map(answer.moves.map((m) => [String(m.move), m]));
  const winning = moves.filter((m) => child.get(String(m)).outcome === "loss");
  let pool = winning;
  let reason = "winning";
  if (winning.length === 0) {
    reason = "delaying";
    const keys = await Promise.all(moves.map(async (m) => {
      const next = child.get(String(m)).position;
      return [(await query(next)).winning_moves.length, tilesOf(next)];
    }));
    const fewest = Math.min(...keys.map((k) => k[0]));
    const most = Math.max(...keys.filter((k) => k[0] === fewest).map((k) => k[1]));
    pool = moves.filter((_, i) => keys[i][0] === fewest && keys[i][1] === most);
  }
  const [r, c] = pool[rng.below(pool.length)];
  return { move: [r, c], position: child.get(String([r, c])).position, level, reason };
}

export const backend = {
  levels: ["very-hard"],
  tables: async () => ({ tables: config.tables }),
  query,
  play,
};

// For scripts and tests: answers, the site's configuration, the reads of
// every query, and opening a table directory ahead of its first question.
window.chompSite = { query, play, config, log, open: (name) => open(config.tables.find((t) => t.name === name)) };
