// Chomp against the computer: the board, the moves, undo, learning mode.
// The answers come from a backend: the server's API (/v1/play for the
// computer's move, /v1/query for the winning moves shown in learning mode),
// or, on a static site written by `chomp site` (<html data-site="static">),
// site.js, which reads the tables in the browser. No build step.
"use strict";

const $ = (id) => document.getElementById(id);

const game = {
  position: [],   // row lengths, top row first
  history: [],    // positions before each of your moves (for undo)
  yourTurn: true,
  over: false,
  busy: false,
  seed: 0,
  plies: 0,
  maxRows: 8,
  maxCols: 15,
  tables: [],     // what /v1/tables says
  bitten: [],     // squares the computer's last bite ate ([row, col], 0-based)
};
// For scripts and tests: the state of the game.
window.chomp = game;

function setStatus(text, state) {
  const s = $("status");
  s.textContent = text;
  s.dataset.state = state;
}

async function getJson(url) {
  const r = await fetch(url);
  const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

const param = (p) => p.join(",");

// Where the answers come from; init() swaps in site.js's on a static site.
let backend = {
  levels: ["easy", "medium", "hard", "very-hard"],
  tables: () => getJson("v1/tables"),
  query: (p) => getJson(`v1/query?position=${param(p)}`),
  play: (p, level, seed) => getJson(`v1/play?position=${param(p)}&level=${level}&seed=${seed}`),
};
const isPoisonOnly = (p) => p.length === 1 && p[0] === 1;

// The position after biting (r, c).
function bite(p, r, c) {
  const out = [];
  for (let i = 0; i < p.length; i++) {
    const len = i >= r ? Math.min(p[i], c) : p[i];
    if (len === 0) break;
    out.push(len);
  }
  return out;
}

function render() {
  const board = $("board");
  const rows = Math.max(1, Number($("rows").value));
  const cols = Math.max(1, Number($("cols").value));
  board.innerHTML = "";
  board.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 38px))`;
  board.classList.toggle("busy", game.busy);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const el = document.createElement("div");
      if (r < game.position.length && c < game.position[r]) {
        el.className = r === 0 && c === 0 ? "tile poison" : "tile";
        el.dataset.row = r;
        el.dataset.col = c;
        el.title = r === 0 && c === 0 ? "poisoned" : `bite ${square(r, c)}`;
        el.addEventListener("click", () => yourMove(r, c));
        el.addEventListener("mouseenter", () => preview(r, c, true));
        el.addEventListener("mouseleave", () => preview(r, c, false));
      } else {
        el.className = game.bitten.some(([br, bc]) => br === r && bc === c) ? "gone bitten" : "gone";
      }
      board.appendChild(el);
    }
  }
}

// A square as players name it: rows and columns counted from 1, top left.
const square = (r, c) => `row ${r + 1}, column ${c + 1}`;

// The squares of \`before\` that \`after\` lacks.
function eaten(before, after) {
  const out = [];
  before.forEach((len, r) => { for (let c = after[r] ?? 0; c < len; c++) out.push([r, c]); });
  return out;
}

// Shades the squares a bite at (r, c) would eat.
function preview(r, c, on) {
  if (game.over || game.busy || !game.yourTurn || (r === 0 && c === 0)) return;
  for (const el of document.querySelectorAll(".tile")) {
    if (Number(el.dataset.row) >= r && Number(el.dataset.col) >= c) el.classList.toggle("doomed", on);
  }
}

async function showWinning() {
  $("hint").textContent = "";
  if (!$("learn").checked || game.over || !game.yourTurn) return;
  const asked = param(game.position);
  try {
    const a = await backend.query(game.position);
    if (param(game.position) !== asked || !game.yourTurn) return;
    for (const [r, c] of a.winning_moves) {
      const el = document.querySelector(`.tile[data-row="${r}"][data-col="${c}"]`);
      if (el) el.classList.add("winning");
    }
    $("hint").textContent = a.outcome === "win"
      ? `You can win: ${a.winning_moves.length} winning move${a.winning_moves.length === 1 ? "" : "s"} (marked green).`
      : "This position is lost against perfect play: every move leads to a win for the computer.";
  } catch (e) {
    $("hint").textContent = `learning mode: ${e.message}`;
  }
}

function finish(youWon) {
  game.over = true;
  game.busy = false;
  render();
  $("hint").textContent = "";
  if (youWon) setStatus("Game over: you win! The computer is left with only the poisoned square.", "won");
  else setStatus("Game over: you lose. Only the poisoned square is left for you.", "lost");
}

function yourTurn(text) {
  game.yourTurn = true;
  game.busy = false;
  render();
  setStatus(text, "your-turn");
  showWinning();
}

async function yourMove(r, c) {
  if (game.over || game.busy || !game.yourTurn) return;
  if (r === 0 && c === 0) {
    setStatus("The poisoned square is eaten only when nothing else is left: bite another one.", "your-turn");
    return;
  }
  game.history.push(game.position);
  game.position = bite(game.position, r, c);
  game.bitten = [];
  game.plies++;
  if (isPoisonOnly(game.position)) return finish(true);
  await computerMove();
}

async function computerMove() {
  game.yourTurn = false;
  game.busy = true;
  render();
  setStatus("The computer is thinking…", "thinking");
  const level = $("level").value;
  try {
    const m = await backend.play(game.position, level, game.seed + game.plies);
    game.bitten = eaten(game.position, m.position);
    game.position = m.position;
    game.plies++;
    if (isPoisonOnly(game.position)) return finish(false);
    yourTurn(`The computer (${level}) bit ${square(m.move[0], m.move[1])} (outlined in red). Your move.`);
  } catch (e) {
    game.busy = false;
    setStatus(`Error: ${e.message}`, "error");
  }
}

function undo() {
  if (game.busy || game.history.length === 0) return;
  game.position = game.history.pop();
  game.bitten = [];
  game.over = false;
  game.plies += 2; // new seeds: the computer may answer differently
  yourTurn("Move taken back. Your move.");
}

function newGame(ev) {
  if (ev) ev.preventDefault();
  const rows = Number($("rows").value);
  const cols = Number($("cols").value);
  if (!(Number.isInteger(rows) && Number.isInteger(cols) && rows >= 1 && cols >= 1 && covered(rows, cols))) {
    // The board keeps the game it had (a covered rectangle on a first load).
    const why = `The tables do not cover a ${rows}×${cols} rectangle (${rows * cols} squares); they cover ${coverage()}.`;
    if (game.position.length === 0) startDefault();
    setStatus(why, "error");
    return;
  }
  game.position = Array(rows).fill(cols);
  game.bitten = [];
  game.history = [];
  game.over = false;
  game.plies = 0;
  game.seed = Math.floor(Math.random() * 1e9);
  const url = new URL(window.location);
  url.searchParams.set("rows", rows);
  url.searchParams.set("cols", cols);
  url.searchParams.set("level", $("level").value);
  url.searchParams.set("start", $("start").value);
  window.history.replaceState(null, "", url);
  if (isPoisonOnly(game.position)) {
    game.yourTurn = $("start").value === "you";
    return finish(!game.yourTurn);
  }
  if ($("start").value === "computer") computerMove();
  else yourTurn("Your move: click a square to bite it.");
}

// What the tables cover, in words: "rectangles inside 8×15 (box-8x15), positions of at most 100 squares (losses-100)".
function coverage() {
  if (game.tables.length === 0) return "nothing (no tables loaded)";
  return game.tables.map((t) => {
    const upTo = t.tiles == null ? t.levels_complete : Math.min(t.tiles, t.levels_complete);
    const what = t.rows != null && t.cols != null
      ? `rectangles inside ${t.rows}×${t.cols}`
      : `positions of at most ${upTo} squares`;
    return `${what} (${t.name})`;
  }).join(", ");
}

// The largest covered rectangle of at most 8×15 (the page's first board when the address asks for too much).
function startDefault() {
  let best = [1, 1];
  for (let r = 1; r <= 8; r++) for (let c = r; c <= 15; c++) if (covered(r, c) && r * c > best[0] * best[1]) best = [r, c];
  game.position = Array(best[0]).fill(best[1]);
  game.history = [];
  game.bitten = [];
  game.over = false;
  game.yourTurn = true;
  $("rows").value = best[0];
  $("cols").value = best[1];
  render();
}

// Whether some table covers the rectangle rows x cols (or its transpose).
function covered(rows, cols) {
  if (game.tables.length === 0) return rows <= game.maxRows && cols <= game.maxCols;
  const fits = (t, r, c) => (t.rows == null || r <= t.rows) && (t.cols == null || c <= t.cols);
  const tiles = rows * cols;
  return game.tables.some((t) =>
    tiles <= t.levels_complete && (t.tiles == null || tiles <= t.tiles) && (fits(t, rows, cols) || fits(t, cols, rows)));
}

async function init() {
  const q = new URLSearchParams(window.location.search);
  try {
    if (document.documentElement.dataset.site === "static") {
      backend = (await import("./site.js")).backend;
      $("api").textContent = "Answers are read in your browser from the tables on this static site (site.json lists them).";
      $("debug").hidden = false;
    }
    for (const o of $("level").options) {
      if (!backend.levels.includes(o.value)) {
        o.disabled = true;
        o.textContent += " (server only)";
      }
    }
    const t = await backend.tables();
    game.tables = t.tables;
    // The largest box among the tables (a directory bounded by tiles only allows its levels).
    game.maxRows = Math.max(1, ...t.tables.map((x) => x.rows ?? x.levels_complete));
    game.maxCols = Math.max(1, ...t.tables.map((x) => x.cols ?? x.levels_complete));
  } catch (e) {
    setStatus(`Error: ${e.message}`, "error");
  }
  $("rows").max = game.maxRows;
  $("cols").max = game.maxCols;
  $("coverage").textContent = `The tables here cover ${coverage()}. Rows and columns are counted from 1, top left.`;
  for (const key of ["rows", "cols", "level", "start"]) if (q.has(key)) $(key).value = q.get(key);
  if (!backend.levels.includes($("level").value)) $("level").value = "very-hard";
  if (q.get("learn") === "1") $("learn").checked = true;
  $("setup").addEventListener("submit", newGame);
  $("undo").addEventListener("click", undo);
  $("learn").addEventListener("change", () => { render(); showWinning(); });
  newGame();
}

init();
