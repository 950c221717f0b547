// Drives a static site written by `chomp site` (served by nginx) in headless
// Chromium: a full very-hard game on the 8x15 box, learning mode's marks, and
// queries of the losses to 110 tiles, every answer and every computer move
// compared with the CLI's (`chomp query --json`, `chomp play --json` with the
// same seed). Measures cold queries and the 8x15 game's first move from the
// page's own timing and writes the figures as JSON.
//
// Usage: node scripts/site-test.cjs SITE_URL FIGURES.json
//        node scripts/site-test.cjs --plain SITE_URL   (a packed site of the
//        8x15 box on a host that ignores Range, python3 -m http.server: 100
//        positions, each answer equal to `chomp query --json`)
// Environment: CHOMP (the binary), BOX (the 8x15 tables), L110 and L110_NAME
// (the 110-tile tables and their name on the site), NODE_PATH reaching
// playwright-core. scripts/site-test.sh sets them.
"use strict";

const { chromium } = require("playwright-core");
const { execFileSync } = require("child_process");
const fs = require("fs");

const plain = process.argv[2] === "--plain";
const base = process.argv[plain ? 3 : 2];
const figuresPath = process.argv[3];
const { CHOMP, BOX, L110, L110_NAME } = process.env;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

function fail(msg) {
  console.error(`site-test: FAILED: ${msg}`);
  process.exit(1);
}

const cli = (args) => execFileSync(CHOMP, args, { encoding: "utf8" });
const cliQuery = (dir, p) => JSON.parse(cli(["query", p.join(" "), "--tables", dir, "--json"]));
const cliPlay = (dir, p, seed) => JSON.parse(cli(["play", p.join(" "), "--tables", dir, "--level", "very-hard", "--seed", String(seed), "--json"]));

// A small deterministic generator for the human's choices and the positions asked.
let seed = 4242;
function rand(n) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
}
// A random position of n tiles: parts drawn at random, sorted.
function randomPosition(n) {
  const parts = [];
  let left = n;
  while (left > 0) {
    const k = 1 + rand(Math.min(left, 1 + rand(24)));
    parts.push(k);
    left -= k;
  }
  return parts.sort((a, b) => b - a);
}
function bite(p, r, c) {
  const out = [];
  for (let i = 0; i < p.length; i++) {
    const len = i >= r ? Math.min(p[i], c) : p[i];
    if (len === 0) break;
    out.push(len);
  }
  return out;
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const state = (page) => page.evaluate(() => ({
  status: document.getElementById("status").dataset.state,
  text: document.getElementById("status").textContent,
  position: window.chomp.position,
  plies: window.chomp.plies,
  seed: window.chomp.seed,
  hint: document.getElementById("hint").textContent,
  marked: [...document.querySelectorAll("#board .tile.winning")].map((e) => [Number(e.dataset.row), Number(e.dataset.col)]),
}));

async function settled(page, plies) {
  await page.waitForFunction(
    (p) => {
      const s = document.getElementById("status").dataset.state;
      return !window.chomp.busy && (window.chomp.over || (s === "your-turn" && window.chomp.plies >= p) || s === "error");
    },
    plies,
    { timeout: 30000 },
  );
  return state(page);
}

async function fullGame(browser) {
  const page = await browser.newPage({ viewport: { width: 820, height: 640 } });
  page.on("pageerror", (e) => fail(`page error: ${e.message}`));
  await page.goto(`${base}?rows=8&cols=15&level=hard&start=you&learn=1`);
  let s = await settled(page, 0);
  if (s.status !== "your-turn") fail(`expected your turn, got ${s.status}: ${s.text}`);
  const levels = await page.evaluate(() => ({
    value: document.getElementById("level").value,
    disabled: [...document.getElementById("level").options].filter((o) => o.disabled).map((o) => o.value),
  }));
  if (levels.value !== "very-hard" || !same(levels.disabled, ["easy", "medium", "hard"])) {
    fail(`the static site should offer very hard only: ${JSON.stringify(levels)}`);
  }
  let replies = 0;
  let marksChecked = 0;
  for (let turn = 0; turn < 80 && !s.status.match(/won|lost/); turn++) {
    if (s.status === "error") fail(s.text);
    const a = cliQuery(BOX, s.position);
    // Learning mode marks exactly the winning moves.
    if (a.outcome === "win") {
      await page.waitForFunction(() => document.querySelectorAll("#board .tile.winning").length > 0, null, { timeout: 30000 });
      s = await state(page);
    } else {
      await page.waitForFunction(() => document.getElementById("hint").textContent.length > 0, null, { timeout: 30000 });
      s = await state(page);
    }
    const key = (m) => m.map(String).sort().join(" ");
    if (key(s.marked) !== key(a.winning_moves)) fail(`learning mode marks ${key(s.marked)} on ${s.position}, the CLI says ${key(a.winning_moves)}`);
    marksChecked++;
    // The human bites a move that does not win, so the computer has a winning
    // reply to find; every other time one that eats a single square.
    const all = [];
    s.position.forEach((len, r) => { for (let c = 0; c < len; c++) if (r || c) all.push([r, c]); });
    const losing = all.filter(([r, c]) => !a.winning_moves.some(([wr, wc]) => wr === r && wc === c));
    let pool = losing.length ? losing : all;
    const corners = pool.filter(([r, c]) => c === s.position[r] - 1 && (r + 1 === s.position.length || s.position[r + 1] <= c));
    if (turn % 2 === 0 && corners.length) pool = corners;
    const [r, c] = pool[rand(pool.length)];
    const after = bite(s.position, r, c);
    const used = s.seed + s.plies + 1;
    await page.click(`#board .tile[data-row="${r}"][data-col="${c}"]`);
    s = await settled(page, s.plies + 2);
    if (s.status === "won") fail("the human won against very hard after a non-winning move");
    if (after.length === 1 && after[0] === 1) break;
    const expected = cliPlay(BOX, after, used);
    if (!same(s.position, expected.position)) fail(`from ${after} with seed ${used} the page played to ${s.position}, chomp play to ${expected.position}`);
    if (cliQuery(BOX, s.position).outcome !== "loss" && !(s.position.length === 1 && s.position[0] === 1)) {
      fail(`very hard left ${s.position}, not a loss`);
    }
    replies++;
  }
  if (s.status !== "lost") fail(`the game did not end with the human's loss: ${s.status}: ${s.text}`);
  if (replies === 0) fail("no computer reply was checked");
  console.log(`site-test: a full very-hard game on 8x15: ${replies} replies equal to chomp play's, ${marksChecked} learning-mode marks equal to chomp query's`);

  // A position of the box given transposed (15 rows), and a position no table holds.
  const tall = Array(15).fill(3).concat([2, 1]).slice(0, 15);
  const got = await page.evaluate((p) => window.chompSite.query(p), tall);
  if (!same(got, cliQuery(BOX, tall))) fail(`the transposed position ${tall} differs from the CLI`);
  const err = await page.evaluate(() => window.chompSite.query([200]).then(() => "answered", (e) => e.message));
  if (!/no table/.test(err)) fail(`a position outside every table: ${err}`);
  await page.close();
}

async function queries110(browser) {
  seed = 1110; // the positions asked do not depend on the game played before
  const page = await browser.newPage();
  page.on("pageerror", (e) => fail(`page error: ${e.message}`));
  await page.goto(`${base}?rows=2&cols=2`);
  await settled(page, 0);
  const asked = [];
  for (let i = 0; i < 40; i++) asked.push(randomPosition(i < 15 ? 110 : 95 + rand(16)));
  for (let i = 0; i < 10; i++) asked.push(randomPosition(1 + rand(60)));
  for (const p of asked) {
    const got = await page.evaluate(([p, name]) => {
      // Force the 110-tile tables even where the box would hold p.
      const t = window.chompSite.config.tables.find((t) => t.name === name);
      return window.chompSite.query(p, t);
    }, [p, L110_NAME]);
    const want = cliQuery(L110, p);
    if (!same(got, want)) fail(`${p}: the page says ${JSON.stringify(got)}, the CLI ${JSON.stringify(want)}`);
  }
  console.log(`site-test: ${asked.length} queries of the 110-tile tables equal to chomp query --json`);
  await page.close();
}

// A fresh context (an empty HTTP cache), one question, the page's own figures.
async function cold(browser, url, action) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (e) => fail(`page error: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(() => window.chompSite !== undefined, null, { timeout: 30000 });
  const figure = await page.evaluate(action.fn, action.arg);
  await context.close();
  return figure;
}

async function measure(browser) {
  seed = 2110;
  const cold110 = [];
  for (let i = 0; i < 7; i++) {
    const p = randomPosition(110);
    const f = await cold(browser, `${base}?rows=2&cols=2`, {
      arg: [p, L110_NAME],
      fn: async ([p, name]) => {
        // Opening reads the manifest (what a page does as it loads); then
        // the question, with no table data in any cache.
        const t0 = performance.now();
        const tables = await window.chompSite.open(name);
        const open = { ms: performance.now() - t0, bytes: tables.stats().bytesRead };
        const t = window.chompSite.config.tables.find((t) => t.name === name);
        await window.chompSite.query(p, t);
        return { ...window.chompSite.log.at(-1), open };
      },
    });
    cold110.push(f);
  }
  // The 8x15 game's first move, the computer starting, on a fresh page.
  const first = await cold(browser, `${base}?rows=2&cols=2`, {
    arg: null,
    fn: async () => {
      const t0 = performance.now();
      const tables = await window.chompSite.open("box-8x15");
      const open = { ms: performance.now() - t0, bytes: tables.stats().bytesRead };
      const t1 = performance.now();
      const m = await window.chompSite.play(Array(8).fill(15), "very-hard", 1);
      return { ...window.chompSite.log.at(-1), ms: performance.now() - t1, move: m.move, open };
    },
  });
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const kib = (b) => (b / 1024).toFixed(1);
  const summary = {
    cold_110: {
      positions: cold110.length,
      median_ms: median(cold110.map((f) => f.ms)),
      max_ms: Math.max(...cold110.map((f) => f.ms)),
      median_transfer_bytes: median(cold110.map((f) => f.transfer)),
      max_transfer_bytes: Math.max(...cold110.map((f) => f.transfer)),
      median_read_bytes: median(cold110.map((f) => f.bytes)),
      max_read_bytes: Math.max(...cold110.map((f) => f.bytes)),
      median_requests: median(cold110.map((f) => f.requests)),
      median_open_ms: median(cold110.map((f) => f.open.ms)),
      manifest_bytes: cold110[0].open.bytes,
      each: cold110,
    },
    first_move_8x15: first,
  };
  fs.writeFileSync(figuresPath, JSON.stringify(summary, null, 2) + "\n");
  const c = summary.cold_110;
  console.log(`site-test: opening the 110-tile tables (fresh pages): median ${c.median_open_ms.toFixed(1)} ms, manifest ${kib(c.manifest_bytes)} KiB`);
  console.log(`site-test: then a cold 110-tile query (${c.positions} positions): median ${c.median_ms.toFixed(1)} ms (max ${c.max_ms.toFixed(1)}), ` +
    `transferred median ${kib(c.median_transfer_bytes)} KiB (max ${kib(c.max_transfer_bytes)}), of it table bytes ${kib(c.median_read_bytes)} KiB, ${c.median_requests} requests`);
  console.log(`site-test: the 8x15 game's first move on a fresh page (tables opened: ${first.open.ms.toFixed(1)} ms, ${kib(first.open.bytes)} KiB): ` +
    `${first.ms.toFixed(1)} ms, ${kib(first.transfer)} KiB transferred, ${first.requests} requests`);
  // The reads a question needs are set by the tables and the positions, not
  // by the machine: the table bytes of a cold 110-tile question stay within
  // 256 KiB (FORMAT.md section 17, "Why these pages").
  if (c.max_read_bytes > 256 * 1024) fail(`a cold 110-tile question read ${c.max_read_bytes} bytes of tables, over 256 KiB`);
  // The site is packed (--pack) and nginx answers several ranges a request:
  // a question's heads, pages and blocks go out in a few waves, not a
  // request a read (about 180 for a 110-tile question).
  const most = Math.max(...c.each.map((e) => e.requests));
  if (most > 10) fail(`a cold 110-tile question took ${most} requests from a packed site`);
  if (first.requests > 10) fail(`the 8x15 game's first move took ${first.requests} requests from a packed site`);
}

// A packed site on a host that answers every range with the whole file:
// 100 positions of the 8x15 box, each as the CLI answers it.
async function plainHost(browser) {
  seed = 815;
  const page = await browser.newPage();
  page.on("pageerror", (e) => fail(`page error: ${e.message}`));
  await page.goto(`${base}?rows=2&cols=2`);
  await settled(page, 0);
  for (let i = 0; i < 100; i++) {
    const p = [];
    let most = 15;
    for (let rows = 1 + rand(8); p.length < rows; ) {
      most = 1 + rand(most);
      p.push(most);
    }
    const got = await page.evaluate((p) => window.chompSite.query(p), p);
    const want = cliQuery(BOX, p);
    if (!same(got, want)) fail(`${p} on a host that ignores Range: the page says ${JSON.stringify(got)}, the CLI ${JSON.stringify(want)}`);
  }
  const log = await page.evaluate(() => window.chompSite.log);
  console.log(`site-test: a packed site on python3 -m http.server (Range ignored): 100 positions of 8x15 equal to chomp query --json (${log.length} questions logged)`);
  await page.close();
}

async function main() {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    if (plain) return await plainHost(browser);
    await fullGame(browser);
    await queries110(browser);
    await measure(browser);
  } finally {
    await browser.close();
  }
}

main().catch((e) => fail(e.stack || String(e)));
