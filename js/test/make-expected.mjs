// Run by scripts/js-tests.sh: draws 1,000 positions (seeded) over the table
// directories it built, plus inputs that do not parse, and records what
// `chomp query POS --tables DIR --json` answers for each, in TABLES/expected.json.
//
//   node js/test/make-expected.mjs CHOMP TABLES
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [chomp, root] = process.argv.slice(2);

// Directory -> how many positions (1,000 in all) and the universe's bounds.
const PLAN = { f1: 180, f2: 150, f3: 250, f3s: 150, box3: 160, box2: 110 };

function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(20261204);
const int = (a, b) => a + Math.floor(rand() * (b - a + 1)); // a ..= b

/** A random diagram of `n` tiles with at most `maxRows` rows and `maxCols` columns (null: none). */
function diagram(n, maxRows, maxCols) {
  for (let tries = 0; tries < 1000; tries++) {
    const rows = [];
    let left = n;
    let prev = maxCols ?? n;
    while (left > 0 && (maxRows === null || rows.length < maxRows)) {
      const v = int(1, Math.min(prev, left));
      rows.push(v);
      left -= v;
      prev = v;
    }
    if (left === 0) return rows;
  }
  return null;
}

function conjugate(rows) {
  const out = [];
  for (let c = 0; c < rows[0]; c++) out.push(rows.filter((r) => r > c).length);
  return out;
}

/** The text forms FORMAT.md section 9 allows, or the array itself (the CLI gets "a b c"). */
function spell(rows) {
  switch (int(0, 5)) {
    case 0:
      return rows.join(",");
    case 1:
      return " " + rows.join(" , ") + " ";
    case 2:
      return rows.map((r, i) => (i === 0 ? "+" + r : i === 1 ? "0" + r : String(r))).join(" ");
    case 3:
      return rows;
    default:
      return rows.join(" ");
  }
}

function positionsFor(name, count) {
  const m = JSON.parse(readFileSync(join(root, name, "manifest.json"), "utf8"));
  const u = m.universe;
  const top = Math.min(u.tiles ?? Infinity, u.rows && u.cols ? u.rows * u.cols : Infinity);
  const out = [];
  while (out.length < count) {
    const r = rand();
    let rows;
    if (r < 0.8) {
      rows = diagram(int(1, top), u.rows, u.cols); // inside
      if (rows && u.rows !== null && u.cols !== null && u.rows !== u.cols && rand() < 0.4) rows = conjugate(rows); // its transpose
    } else if (r < 0.9) {
      rows = diagram(int(top + 1, top + 5), null, null); // beyond the top level
    } else {
      // outside the bounds one way or both
      const n = int(2, Math.min(top, 40));
      rows = rand() < 0.5 ? Array(n).fill(1) : [n];
    }
    if (rows && rows.length <= 255 && rows[0] <= 255) out.push(spell(rows));
  }
  return out;
}

const PARSE_INPUTS = [
  "3 2 1", "3,2,1", " 3 , 2,1 ", "03 +2 1", "", "   ", ",", "3,,1", ",3", "3,", "3 , , 1", "-1", "3 0", "0", "2 3",
  "3 x", "x", "256", "255", "99999999999", "+99999999999", "4294967295", "4294967296", "+", "++3", "3+", "3.0", "0x3",
  "3\t2\n1", "\uff13", "3\u00a02 1", "3\u20282", "3\u200b2", "3\u00852", "3\u001f2", "\u00e9", "3 2 1 extra", "1 ".repeat(255),
  "1 ".repeat(256), "5 4 4 3 3 3 2 2 2 2 1 1 1 1 1", "3 \"2\" 1", "3\\2",
];

function cli(pos, dir) {
  return new Promise((resolve) => {
    execFile(chomp, ["query", "--tables", dir, "--json", "--", pos], (err, stdout, stderr) => {
      if (err) resolve({ error: stderr.trim().replace(/^error: /, "") });
      else resolve({ answer: JSON.parse(stdout) });
    });
  });
}

async function pool(items, work, width = 3) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]);
      }
    }),
  );
  return out;
}

const jobs = [];
for (const [name, count] of Object.entries(PLAN)) for (const pos of positionsFor(name, count)) jobs.push({ dir: name, pos });
const cases = await pool(jobs, async (j) => ({ ...j, ...(await cli(Array.isArray(j.pos) ? j.pos.join(" ") : j.pos, join(root, j.dir))) }));
const parse = await pool(PARSE_INPUTS, async (pos) => ({ dir: "f3", pos, ...(await cli(pos, join(root, "f3"))) }));
writeFileSync(join(root, "expected.json"), JSON.stringify({ cases, parse }));
const answered = cases.filter((c) => c.answer).length;
console.log(`make-expected: ${cases.length} positions (${answered} answered, ${cases.length - answered} refused) and ${parse.length} parse inputs from ${chomp}`);
