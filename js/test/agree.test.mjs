// The reader against `chomp query --json` (answers recorded by make-expected.mjs):
// 1,000 seeded positions over formats 1, 2 and 3, sharded and not, two boxes
// (positions whose transpose is in the universe included), and inputs that do
// not parse. Read from disk here; http.test.mjs reads over HTTP.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { ChompTablesError, openTables } from "../chomp-tables.js";
import { NEEDS_TABLES, agree, cliQuery, expected, jsQuery, tables } from "./helpers.mjs";

test("1,000 positions: the same answer as chomp query --json, or the same error", { skip: NEEDS_TABLES }, async () => {
  const { cases } = expected();
  assert.equal(cases.length, 1000);
  const dirs = new Set(cases.map((c) => c.dir));
  assert.deepEqual([...dirs].sort(), ["box2", "box3", "f1", "f2", "f3", "f3s"]);
  const { answered, refused } = await agree(cases, (d) => openTables(tables(d)));
  assert.ok(answered > 700 && refused > 50, `${answered} answered, ${refused} refused`);
  // Positions outside a box whose transpose is inside, answered in their own orientation.
  const transposed = cases.filter((c) => c.answer && c.dir.startsWith("box") && c.answer.position.length > (c.dir === "box3" ? 5 : 6));
  assert.ok(transposed.length > 20, `${transposed.length} transposed positions`);
  // Both outcomes, with and without Grundy values.
  const outcomes = new Set(cases.filter((c) => c.answer).map((c) => `${c.answer.outcome}/${c.answer.grundy === null ? "none" : "g"}`));
  assert.deepEqual([...outcomes].sort(), ["loss/g", "loss/none", "win/g", "win/none"]);
});

test("inputs that do not parse: the CLI's message, word for word", { skip: NEEDS_TABLES }, async () => {
  const { parse } = expected();
  const { answered, refused } = await agree(parse, (d) => openTables(tables(d)));
  assert.ok(answered >= 4 && refused >= 30, `${answered} answered, ${refused} refused`);
  for (const c of parse.filter((c) => c.error && c.error.startsWith("invalid position"))) {
    const t = await openTables(tables(c.dir));
    await assert.rejects(t.query(c.pos), (e) => e.name === "InvalidPosition" && e instanceof ChompTablesError);
  }
});

test("a missing directory, a file instead of a directory", async () => {
  await assert.rejects(openTables("/nonexistent/chomp-tables-dir"), { name: "TableError", message: "/nonexistent/chomp-tables-dir: no such directory (no manifest.json)" });
  const here = new URL("../package.json", import.meta.url).pathname;
  await assert.rejects(openTables(here), { message: `${here}: a file, not a table directory` });
});

test("a Map of relative path -> Blob or Uint8Array (what a browser directory picker gives) answers alike", { skip: NEEDS_TABLES }, async () => {
  const { readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const cases = expected().cases.filter((c) => c.dir === "f2" || c.dir === "box3");
  const { answered } = await agree(cases, (d) => {
    const files = new Map([["manifest.json", new Blob([readFileSync(join(tables(d), "manifest.json"))])]]);
    const listed = Object.keys(JSON.parse(readFileSync(join(tables(d), "manifest.json"), "utf8")).files);
    listed.forEach((rel, i) => {
      const bytes = readFileSync(join(tables(d), rel));
      files.set(rel, i % 2 ? new Blob([bytes]) : new Uint8Array(bytes));
    });
    return openTables(files, { label: d });
  });
  assert.ok(answered > 200);
  const files = new Map();
  await assert.rejects(openTables(files, { label: "empty" }), { message: "empty: no manifest.json; not a chomp table directory" });
});

const PUBLISHED = new URL("../../results/box-8x15/", import.meta.url).pathname;

test("the published results/box-8x15: 100 positions (transposes included) as the CLI answers", { skip: NEEDS_TABLES || (!existsSync(PUBLISHED) && "results/box-8x15 is absent") }, async () => {
  let seed = 42;
  const rand = (n) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const t = await openTables(PUBLISHED);
  for (let i = 0; i < 100; i++) {
    const rows = [];
    let prev = 15;
    const height = 1 + rand(8);
    while (rows.length < height && prev > 0) rows.push((prev = 1 + rand(prev)));
    const pos = i % 3 === 0 ? conj(rows) : rows;
    const cli = await cliQuery(pos.join(" "), PUBLISHED);
    const got = await jsQuery(t, pos, ChompTablesError);
    if (cli.answer) assert.deepStrictEqual(got.answer, cli.answer, pos.join(" "));
    else assert.equal(got.error, cli.error, pos.join(" "));
  }
});

function conj(rows) {
  return Array.from({ length: rows[0] }, (_, c) => rows.filter((r) => r > c).length);
}

test("a directory whose run is not complete: levels beyond levels_complete are not answered", { skip: NEEDS_TABLES }, async () => {
  const { copyTables, readManifest, writeManifest, removeDir } = await import("./helpers.mjs");
  for (const src of ["dmg3", "dmg2"]) {
    const dir = copyTables(src);
    try {
      const m = readManifest(dir);
      const keep = 12;
      m.levels_complete = keep;
      m.complete = false;
      m.levels = m.levels.slice(0, keep);
      if (m.shards) m.shards = m.shards.slice(0, keep);
      if (m.checks) m.checks = m.checks.filter((c) => c.tiles <= keep);
      const level = (rel) => Number((/[LG](\d{4})/.exec(rel) || [])[1]);
      m.files = Object.fromEntries(Object.entries(m.files).filter(([rel]) => /^(losses|grundy)\//.test(rel) && level(rel) <= keep));
      writeManifest(dir, m);
      const t = await openTables(dir);
      for (const pos of ["5 3 1", "4 4 4", "5 5 3", "13", "21", "1 1 1 1 1 1 1 1 1 1 1 1"]) {
        const cli = await cliQuery(pos, dir);
        const got = await jsQuery(t, pos, ChompTablesError);
        if (cli.answer) assert.deepStrictEqual(got.answer, cli.answer, pos);
        else assert.equal(got.error, cli.error, pos);
      }
      assert.equal((await jsQuery(t, "5 5 3", ChompTablesError)).error, "level 13 is not in the tables (levels 1-12 are complete)");
    } finally {
      removeDir(dir);
    }
  }
});

test("manifestSha256 pins the manifest: the right digest opens, any other is refused naming manifest.json", { skip: NEEDS_TABLES }, async () => {
  const { createHash } = await import("node:crypto");
  const { readFileSync } = await import("node:fs");
  const dir = tables("f3");
  const sha = createHash("sha256").update(readFileSync(`${dir}/manifest.json`)).digest("hex");
  const t = await openTables(dir, { manifestSha256: sha });
  assert.equal((await t.query("3 2 1")).outcome, "win");
  const other = sha.replace(/^./, (c) => (c === "0" ? "1" : "0"));
  await assert.rejects(openTables(dir, { manifestSha256: other }), (e) => e.name === "TableError" && /manifest\.json: SHA-256 differs/.test(e.message));
  await assert.rejects(openTables(dir, { manifestSha256: "ABC" }), /64 lowercase hex/);
});

test("against pins the published manifest: the same bytes open, any other manifest is refused whole", { skip: NEEDS_TABLES }, async () => {
  const { readFileSync } = await import("node:fs");
  const dir = tables("f3");
  const published = readFileSync(`${dir}/manifest.json`);
  const t = await openTables(dir, { against: published });
  assert.equal((await t.query("3 2 1")).outcome, "win");
  assert.equal((await (await openTables(dir, { against: published.toString("utf8") })).query("3 2 1")).outcome, "win");
  const other = Buffer.from(published);
  other[other.length - 2] ^= 1;
  await assert.rejects(openTables(dir, { against: other }), (e) => e.name === "TableError" && /not the published tables/.test(e.message));
  await assert.rejects(openTables(dir, { against: 42 }), /against must be/);
});
