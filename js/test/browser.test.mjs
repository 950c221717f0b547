// The module in a real browser (headless Chromium, where installed): a page
// importing the vendored fzstd by relative path (no import map), reading tables from a static
// server with Range requests, from a Map of Blobs and from a directory handle. Its answers must equal
// the CLI's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { NEEDS_TABLES, TABLES, cliQuery, expected, findExecutable, removeDir, serveDir } from "./helpers.mjs";

const JS = join(dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = process.env.CHROMIUM || findExecutable(["chromium", "chromium-browser", "google-chrome"]);

const PAGE = `<!doctype html>
<meta charset="utf-8">
<script type="module">
import { openTables } from "./js/chomp-tables.js";
const out = { answers: [], errors: [] };
try {
  const positions = await (await fetch("./positions.json")).json();
  const t = await openTables("tables/box3/");          // a URL of this site
  for (const p of positions) {
    try { out.answers.push(await t.query(p)); } catch (e) { out.answers.push({ error: e.message, name: e.name }); }
  }
  out.stats = t.stats();
  // The same tables as a Map of relative path -> Blob (what a directory picker gives).
  const manifest = await (await fetch("tables/dmg3/manifest.json")).json();
  const files = new Map([["manifest.json", await (await fetch("tables/dmg3/manifest.json")).blob()]]);
  for (const rel of Object.keys(manifest.files)) files.set(rel, await (await fetch("tables/dmg3/" + rel)).blob());
  out.blobs = await (await openTables(files, { label: "picked" })).query("5 3 1");
  // And as a directory handle (the origin private file system: a picker's handle without the picker).
  const opfs = await navigator.storage.getDirectory();
  const top = await opfs.getDirectoryHandle("dmg3", { create: true });
  for (const [rel, blob] of files) {
    const parts = rel.split("/");
    let dir = top;
    for (const p of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(p, { create: true });
    const w = await (await dir.getFileHandle(parts[parts.length - 1], { create: true })).createWritable();
    await w.write(blob);
    await w.close();
  }
  out.handle = await (await openTables(top)).query("5 3 1");
  try {
    await (await openTables(top)).query("21");
  } catch (e) {
    out.handleError = e.message;
  }
} catch (e) {
  out.errors.push(String(e && e.stack || e));
}
await fetch("/result", { method: "POST", body: JSON.stringify(out) });
</script>`;

test("in headless Chromium: no import map, Range requests and Blobs; the CLI's answers", { skip: !TABLES ? NEEDS_TABLES : !CHROMIUM ? "no chromium installed" : false, timeout: 90000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "chomp-js-browser-"));
  symlinkSync(JS, join(root, "js"));
  symlinkSync(TABLES, join(root, "tables"));
  writeFileSync(join(root, "index.html"), PAGE);
  const cases = expected().cases.filter((c) => c.dir === "box3").slice(0, 40);
  writeFileSync(join(root, "positions.json"), JSON.stringify(cases.map((c) => c.pos)));
  let resolve;
  const posted = new Promise((r) => (resolve = r));
  const srv = await serveDir(root, { onPost: (_, body) => resolve(JSON.parse(body)) });
  const profile = mkdtempSync(join(tmpdir(), "chomp-js-chromium-"));
  const browser = spawn(CHROMIUM, ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", `--user-data-dir=${profile}`, srv.url + "index.html"], { stdio: "ignore", detached: true });
  let timer;
  try {
    const out = await Promise.race([posted, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("the page posted no result in 60 s")), 60000)))]);
    assert.deepEqual(out.errors, []);
    assert.equal(out.answers.length, cases.length);
    cases.forEach((c, i) => {
      if (c.answer) assert.deepStrictEqual(out.answers[i], c.answer, JSON.stringify(c.pos));
      else assert.deepStrictEqual(out.answers[i].error, c.error, JSON.stringify(c.pos));
    });
    assert.ok(out.stats.requests > 0 && out.stats.bytesRead > 0);
    const tableRequests = srv.log.filter((e) => e.path.startsWith("tables/box3/") && e.path.endsWith(".cht"));
    assert.ok(tableRequests.length > 0 && tableRequests.every((e) => e.status === 206), "the browser read format 3 tables in ranges");
    const want = (await cliQuery("5 3 1", join(TABLES, "dmg3"))).answer;
    assert.deepStrictEqual(out.blobs, want);
    assert.deepStrictEqual(out.handle, want);
    assert.equal(out.handleError, "position 21 (1 row, 21 columns, 21 tiles) is outside the tables (at most 20 tiles)");
  } finally {
    clearTimeout(timer);
    try {
      process.kill(-browser.pid, "SIGTERM");
    } catch {}
    await new Promise((r) => {
      if (browser.exitCode !== null || browser.signalCode !== null) return r();
      browser.once("exit", r);
      setTimeout(r, 5000).unref();
    });
    await srv.close();
    removeDir(root);
    removeDir(profile);
  }
});
