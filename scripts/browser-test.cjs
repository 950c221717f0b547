// Drives the game page of `chomp serve` in headless Chromium (playwright-core,
// no downloaded browser): plays a full game at level very-hard by clicking
// tiles, and checks after every computer reply that the position left is a
// loss (via /v1/query). Optionally takes a screenshot mid-game.
//
// Usage: node scripts/browser-test.cjs BASE_URL [SCREENSHOT.png]
// (NODE_PATH must reach playwright-core; scripts/browser-test.sh sets it up.)
"use strict";

const { chromium } = require("playwright-core");

const base = process.argv[2];
const screenshot = process.argv[3];
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

function fail(msg) {
  console.error(`browser-test: FAILED: ${msg}`);
  process.exit(1);
}

async function query(position) {
  const r = await fetch(`${base}/v1/query?position=${position.join(",")}`);
  if (!r.ok) fail(`/v1/query ${position}: HTTP ${r.status}`);
  return r.json();
}

// A small deterministic generator for the human's choices.
let seed = 12345;
function rand(n) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
}

const state = (page) => page.evaluate(() => ({
  status: document.getElementById("status").dataset.state,
  text: document.getElementById("status").textContent,
  position: window.chomp.position,
  plies: window.chomp.plies,
  busy: window.chomp.busy,
  tiles: document.querySelectorAll("#board .tile[data-row][data-col]").length,
}));

async function settled(page, plies) {
  await page.waitForFunction(
    (p) => {
      const s = document.getElementById("status").dataset.state;
      return !window.chomp.busy && (window.chomp.over || (s === "your-turn" && window.chomp.plies >= p) || s === "error");
    },
    plies,
    { timeout: 15000 },
  );
  return state(page);
}

async function click(page, r, c) {
  await page.click(`#board .tile[data-row="${r}"][data-col="${c}"]`);
}

async function main() {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 820, height: 640 } });
    page.on("pageerror", (e) => fail(`page error: ${e.message}`));

    // The full game: you start on a 6x9 rectangle against very-hard.
    await page.goto(`${base}/?rows=6&cols=9&level=very-hard&start=you`);
    let s = await settled(page, 0);
    if (s.status !== "your-turn") fail(`expected your turn, got ${s.status}: ${s.text}`);
    let replies = 0;
    for (let turn = 0; turn < 60 && !s.status.match(/won|lost/); turn++) {
      if (s.status === "error") fail(s.text);
      const tiles = s.position.reduce((a, b) => a + b, 0);
      if (s.tiles !== tiles) fail(`board shows ${s.tiles} tiles for position ${s.position}`);
      // The human bites a move that does not win (if there is one), so the
      // computer always has a winning reply to find; every other time one
      // that eats a single square, for a longer game.
      const a = await query(s.position);
      const all = [];
      s.position.forEach((len, r) => { for (let c = 0; c < len; c++) if (r || c) all.push([r, c]); });
      const losing = all.filter(([r, c]) => !a.winning_moves.some(([wr, wc]) => wr === r && wc === c));
      let pool = losing.length ? losing : all;
      const corners = pool.filter(([r, c]) => c === s.position[r] - 1 && (r + 1 === s.position.length || s.position[r + 1] <= c));
      if (turn % 2 === 0 && corners.length) pool = corners;
      const [r, c] = pool[rand(pool.length)];
      await click(page, r, c);
      s = await settled(page, s.plies + 2);
      if (s.status === "won") fail("the human won against very-hard after a non-winning move");
      if (s.status === "your-turn") {
        const left = await query(s.position);
        if (left.outcome !== "loss") fail(`very-hard left ${s.position}, a ${left.outcome}`);
        replies++;
        console.log(`browser-test: bit (${r},${c}); very-hard left ${s.position.join(" ")} (a loss)`);
      }
    }
    if (s.status !== "lost") fail(`the game did not end with the human's loss: ${s.status}: ${s.text}`);
    if (replies === 0) fail("no computer reply was checked");
    console.log(`browser-test: game over after ${replies} checked replies: "${s.text}"`);

    // Undo takes the last move back; a new game starts afresh.
    await page.click("#undo");
    s = await settled(page, 0);
    if (s.status !== "your-turn" || s.tiles < 2) fail(`undo: ${s.status} with ${s.tiles} tiles`);

    // The computer starts (a rectangle is a win): its first move leaves a loss,
    // and the squares it ate are outlined.
    await page.goto(`${base}/?rows=7&cols=11&level=very-hard&start=computer`);
    s = await settled(page, 1);
    if (s.status !== "your-turn" || s.plies !== 1) fail(`computer start: ${s.status} after ${s.plies} plies: ${s.text}`);
    if ((await query(s.position)).outcome !== "loss") fail(`very-hard opened 7x11 with ${s.position}, not a loss`);
    console.log(`browser-test: very-hard opened 7x11 with ${s.position.join(" ")} (a loss)`);
    const bitten = await page.evaluate(() => document.querySelectorAll("#board .gone.bitten").length);
    if (bitten !== 77 - s.position.reduce((a, b) => a + b, 0)) fail(`the computer's bite outlines ${bitten} squares`);
    if (!/bit row \d+, column \d+/.test(s.text)) fail(`the computer's move is not named by row and column from 1: ${s.text}`);

    // A rectangle the tables do not cover: the status says what they cover,
    // and a covered board is there to play.
    await page.goto(`${base}/?rows=12&cols=12&level=very-hard&start=you`);
    await page.waitForFunction(() => document.getElementById("status").dataset.state === "error", null, { timeout: 10000 });
    s = await state(page);
    if (!s.text.includes("12×12") || !s.text.includes("inside 8×15")) fail(`uncovered rectangle: ${s.text}`);
    if (s.tiles < 2) fail(`uncovered rectangle left a board of ${s.tiles} tiles`);
    const coverage = await page.evaluate(() => document.getElementById("coverage").textContent);
    if (!coverage.includes("8×15")) fail(`coverage line: ${coverage}`);
    if ((await fetch(`${base}/favicon.ico`)).status !== 200) fail("/favicon.ico is not served");

    // A phone-sized screen: the 8x15 board fits without scrolling sideways.
    const narrow = await browser.newPage({ viewport: { width: 400, height: 760 } });
    await narrow.goto(`${base}/?rows=8&cols=15&level=very-hard&start=you`);
    await settled(narrow, 0);
    const width = await narrow.evaluate(() => document.documentElement.scrollWidth);
    if (width > 400) fail(`the 8x15 board scrolls sideways at 400 px (page ${width} px wide)`);
    await narrow.close();
    console.log("browser-test: coverage shown, uncovered rectangle refused with a board left, 8x15 fits 400 px");

    if (screenshot) {
      // Mid-game in learning mode against easy: the winning moves are marked.
      await page.goto(`${base}/?rows=6&cols=10&level=easy&start=you&learn=1`);
      s = await settled(page, 0);
      for (const plies of [2, 4]) {
        // Bite the last square of the bottom row.
        await click(page, s.position.length - 1, s.position[s.position.length - 1] - 1);
        s = await settled(page, plies);
      }
      await page.waitForFunction(() => document.getElementById("hint").textContent.length > 0, null, { timeout: 10000 });
      await page.screenshot({ path: screenshot });
      console.log(`browser-test: screenshot ${screenshot} (${s.status}: ${s.text})`);
    }
  } finally {
    await browser.close();
  }
  console.log("browser-test: ok");
}

main().catch((e) => fail(e.stack || String(e)));
