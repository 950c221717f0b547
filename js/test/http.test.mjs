// The reader over HTTP: a static server with Range support (as nginx answers),
// one that ignores Range (and python3 -m http.server, which does), and nginx
// itself where it is installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTables } from "../chomp-tables.js";
import { NEEDS_TABLES, TABLES, agree, copyTables, expected, findExecutable, packTables, removeDir, serveDir, tables } from "./helpers.mjs";

const bytesOf = (log, path) => log.filter((e) => e.path === path).reduce((a, e) => a + e.bytes, 0);

test("over HTTP with Range requests: formats 3 and 1 agree with the CLI; format 3 reads only ranges", { skip: NEEDS_TABLES }, async () => {
  const srv = await serveDir(TABLES);
  try {
    const cases = expected().cases.filter((c) => c.dir === "f3" || c.dir === "f1");
    const { answered, opened } = await agree(cases, (d) => openTables(srv.url + d + "/"));
    assert.ok(answered > 300);
    const f3 = srv.log.filter((e) => e.path.startsWith("f3/") && e.path.endsWith(".cht"));
    assert.ok(f3.length > 0 && f3.every((e) => e.range !== null && e.status === 206), "format 3 tables are read in ranges");
    const f1 = srv.log.filter((e) => e.path.startsWith("f1/") && e.path.endsWith(".cht"));
    assert.ok(f1.length > 0 && f1.every((e) => e.range === null && e.status === 200), "format 1 tables are read whole");
    // What the reader counts is what the server sent.
    for (const d of ["f3", "f1"]) {
      const mine = srv.log.filter((e) => e.path.startsWith(d + "/"));
      const s = opened.get(d).stats();
      assert.equal(s.requests, mine.length);
      assert.equal(s.bytesRead, mine.reduce((a, e) => a + e.bytes, 0));
      assert.ok(s.cacheBytes > 0);
    }
  } finally {
    await srv.close();
  }
});

test("a question reads a few KiB of a table, not the table", { skip: NEEDS_TABLES }, async () => {
  const srv = await serveDir(TABLES);
  try {
    const t = await openTables(srv.url + "f3");
    const a = await t.query("20 18 10 5 4 2 1"); // 60 tiles: 59 levels looked up
    assert.equal(a.tiles, 60);
    const rel = "f3/losses/L0060.cht";
    const size = statSync(join(TABLES, rel)).size;
    const read = bytesOf(srv.log, rel);
    assert.equal(srv.log.filter((e) => e.path === rel).length, 3, "head, index page, block");
    assert.ok(read < 4096 && read < size / 4, `${read} of ${size} bytes of ${rel}`);
    const b = await t.query("15 10 8 6 4 2"); // 45 tiles, with a Grundy value
    assert.notEqual(b.grundy, null);
    const g = "f3/grundy/G0045.cht";
    const gread = bytesOf(srv.log, g);
    assert.ok(gread < 12 * 1024 && gread < statSync(join(TABLES, g)).size / 4, `${gread} bytes of ${g}`);
    // Asked again: everything from the cache.
    const before = t.stats().requests;
    assert.deepEqual(await t.query("20 18 10 5 4 2 1"), a);
    assert.equal(t.stats().requests, before);
  } finally {
    await srv.close();
  }
});

test("concurrent identical questions share their requests", { skip: NEEDS_TABLES }, async () => {
  const srv = await serveDir(TABLES);
  try {
    for (const d of ["f3", "f3s", "f1"]) {
      const pos = d === "f3" ? "12 9 9 7 5 3 2 1" : "9 7 5 3 2 1";
      const one = await openTables(srv.url + d);
      const base = one.stats().requests;
      const answer = await one.query(pos);
      const single = one.stats().requests - base;
      const many = await openTables(srv.url + d);
      const start = srv.log.length;
      const answers = await Promise.all(Array.from({ length: 8 }, () => many.query(pos)));
      for (const x of answers) assert.deepEqual(x, answer);
      assert.equal(srv.log.length - start, single, `${d}: 8 concurrent questions made ${srv.log.length - start} requests, one made ${single}`);
      const keys = srv.log.slice(start).map((e) => `${e.path} ${e.range}`);
      assert.equal(new Set(keys).size, keys.length, `${d}: a range was asked twice`);
    }
  } finally {
    await srv.close();
  }
});

test("a server that ignores Range (200 with the whole file)", { skip: NEEDS_TABLES }, async () => {
  const srv = await serveDir(TABLES, { ranges: false });
  try {
    const cases = expected().cases.filter((c) => c.dir === "box3").slice(0, 60);
    const { answered } = await agree(cases, (d) => openTables(srv.url + d));
    assert.ok(answered > 30);
    assert.ok(srv.log.every((e) => e.status === 200));
  } finally {
    await srv.close();
  }
});

test("a pack: a question's reads in a few requests of several ranges, the same answers", { skip: NEEDS_TABLES }, async () => {
  for (const d of ["f3", "f3s"]) {
    const { dir, pack } = packTables(tables(d));
    const srv = await serveDir(dir, { multi: true });
    try {
      const cases = expected().cases.filter((c) => c.dir === d);
      const { answered } = await agree(cases, () => openTables(srv.url, { pack }));
      assert.ok(answered > 100, `${d}: ${answered} answered`);
      assert.ok(srv.log.every((e) => e.path === "manifest.json" || (e.path === "tables.pack" && e.status === 206)), `${d}: only the pack, in ranges`);
      // A 60-tile question looks up 59 levels: heads, pages and blocks in a few waves, not 3 requests a level.
      // (40 tiles in the sharded directory.)
      const t = await openTables(srv.url, { pack });
      const before = t.stats().requests;
      await t.query(d === "f3" ? "20 18 10 5 4 2 1" : "12 9 8 6 4 1");
      const requests = t.stats().requests - before;
      assert.ok(requests <= 8, `${d}: a cold question of 60 or 40 tiles took ${requests} requests`);
      assert.ok(srv.log.some((e) => e.range && e.range.includes(",")), `${d}: several ranges a request`);
    } finally {
      await srv.close();
      removeDir(dir);
    }
  }
});

test("a pack on a server that answers one range a request: the same answers", { skip: NEEDS_TABLES }, async () => {
  const { dir, pack } = packTables(tables("f3"));
  const srv = await serveDir(dir);
  try {
    const cases = expected().cases.filter((c) => c.dir === "f3").slice(0, 80);
    const { answered } = await agree(cases, () => openTables(srv.url, { pack }));
    assert.ok(answered > 30);
    // The first request of several ranges got the whole pack (200); single ranges from then on.
    const packed = srv.log.filter((e) => e.path === "tables.pack");
    assert.ok(packed.filter((e) => e.status === 200).length <= cases.length, "whole-pack answers only until the reader learns");
    assert.ok(packed.some((e) => e.status === 206 && !e.range.includes(",")));
  } finally {
    await srv.close();
    removeDir(dir);
  }
});

test("a pack on a server that ignores Range: the pack read whole once, the same answers", { skip: NEEDS_TABLES }, async () => {
  const { dir, pack } = packTables(tables("f3"));
  const srv = await serveDir(dir, { ranges: false });
  try {
    const cases = expected().cases.filter((c) => c.dir === "f3").slice(0, 100);
    const { answered, opened } = await agree(cases, () => openTables(srv.url, { pack }));
    assert.ok(answered > 30);
    // The requests of the first wave in flight together are each answered whole; one body is read, the rest dropped.
    const t = opened.get("f3");
    const size = statSync(join(dir, "tables.pack")).size;
    assert.ok(t.stats().bytesRead < 2 * size, `${t.stats().bytesRead} bytes read of a pack of ${size}`);
    const before = t.stats().requests;
    await t.query("20 18 10 5 4 2 1");
    assert.equal(t.stats().requests, before, "a question after the pack arrived reads nothing more");
  } finally {
    await srv.close();
    removeDir(dir);
  }
});

const PYTHON3 = findExecutable(["python3"]);

test("python3 -m http.server (no Range): a packed directory agrees with the CLI", { skip: !TABLES ? NEEDS_TABLES : !PYTHON3 ? "python3 is not installed" : false }, async () => {
  const { dir, pack } = packTables(tables("f3s"));
  const port = await freePort();
  const server = spawn(PYTHON3, ["-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, String(port)], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}/`;
  try {
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      try {
        up = (await fetch(url + "manifest.json")).ok;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.ok(up, "python3 -m http.server did not start");
    const probe = await fetch(url + "tables.pack", { headers: { Range: "bytes=0-9" } });
    await probe.arrayBuffer();
    assert.equal(probe.status, 200, "python3 -m http.server ignores Range");
    const cases = expected().cases.filter((c) => c.dir === "f3s");
    const { answered } = await agree(cases, () => openTables(url, { pack }));
    assert.ok(answered > 100, `${answered} answered`);
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => (server.exitCode !== null ? r() : server.once("exit", r)));
    removeDir(dir);
  }
});

test("a damaged pack is refused naming the table", { skip: NEEDS_TABLES }, async () => {
  const { dir, pack } = packTables(tables("f3"));
  const srv = await serveDir(dir, { multi: true });
  try {
    const rel = "losses/L0012.cht";
    const [offset, bytes] = pack.files[rel];
    const data = readFileSync(join(dir, "tables.pack"));
    data[offset + bytes - 1] ^= 0x40; // in the table's last block
    writeFileSync(join(dir, "tables.pack"), data);
    const t = await openTables(srv.url, { pack });
    await assert.rejects(t.query("5 4 2 1"), (e) => e.name === "TableError" && e.message.startsWith(`${srv.url}${rel}: `));
    const wrong = { ...pack, files: { ...pack.files, [rel]: [offset, bytes + 1] } };
    await assert.rejects((await openTables(srv.url, { pack: wrong })).query("5 4 2 1"), { message: new RegExp(`${rel}: truncated or padded`) });
  } finally {
    await srv.close();
    removeDir(dir);
  }
});

test("HTTP errors and a padded file name the URL", { skip: NEEDS_TABLES }, async () => {
  const dir = copyTables("dmg3");
  const srv = await serveDir(dir, { missing: ["losses/L0009.cht"] });
  try {
    const t = await openTables(srv.url);
    await assert.rejects(t.query("5 3 1"), { name: "TableError", message: `${srv.url}losses/L0009.cht: HTTP 404 Not Found` });
    appendFileSync(join(dir, "losses/L0008.cht"), Buffer.from([0]));
    await assert.rejects((await openTables(srv.url)).query("4 3 1"), { message: /^http:.*\/losses\/L0008\.cht: truncated or padded: \d+ bytes, manifest\.json says \d+$/ });
    await assert.rejects(openTables(srv.url + "nowhere/"), { message: `${srv.url}nowhere/: no manifest.json; not a chomp table directory` });
  } finally {
    await srv.close();
    removeDir(dir);
  }
});

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const NGINX = findExecutable(["nginx"]);

test("nginx: formats 3 (sharded) and 2 agree with the CLI", { skip: !TABLES ? NEEDS_TABLES : !NGINX ? "nginx is not installed" : false }, async () => {
  const prefix = mkdtempSync(join(tmpdir(), "chomp-js-nginx-"));
  const port = await freePort();
  const root = process.getuid && process.getuid() === 0 ? "user root;\n" : "";
  writeFileSync(
    join(prefix, "nginx.conf"),
    `${root}daemon off;\nworker_processes 1;\npid ${prefix}/nginx.pid;\nerror_log ${prefix}/error.log;\n` +
      `events { worker_connections 64; }\nhttp {\n  access_log off;\n  client_body_temp_path ${prefix}/body;\n  proxy_temp_path ${prefix}/proxy;\n` +
      `  fastcgi_temp_path ${prefix}/fastcgi;\n  uwsgi_temp_path ${prefix}/uwsgi;\n  scgi_temp_path ${prefix}/scgi;\n` +
      `  types { application/json json; application/octet-stream cht; }\n  server { listen 127.0.0.1:${port}; root ${TABLES}; }\n}\n`,
  );
  const nginx = spawn(NGINX, ["-p", prefix, "-c", join(prefix, "nginx.conf")], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}/`;
  try {
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      try {
        up = (await fetch(url + "f3/manifest.json")).ok;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.ok(up, "nginx did not start");
    const cases = expected().cases.filter((c) => c.dir === "f3s" || c.dir === "f2" || c.dir === "box2");
    const { answered, opened } = await agree(cases, (d) => openTables(url + d));
    assert.ok(answered > 250);
    assert.ok(opened.get("f3s").stats().bytesRead > 0);
  } finally {
    nginx.kill("SIGTERM");
    await new Promise((r) => (nginx.exitCode !== null ? r() : nginx.once("exit", r)));
    removeDir(prefix);
  }
});

test("the cache stays within its bound, and a cache of 0 bytes still answers", { skip: NEEDS_TABLES }, async () => {
  const cases = expected().cases.filter((c) => c.dir === "f3" || c.dir === "f2");
  for (const bound of [40000, 0]) {
    const opened = new Map();
    const { answered } = await agree(cases.slice(0, bound ? 200 : 40), async (d) => {
      const t = await openTables(tables(d), { cacheBytes: bound });
      opened.set(d, t);
      const q = t.query.bind(t);
      t.query = async (p) => {
        try {
          return await q(p);
        } finally {
          assert.ok(t.stats().cacheBytes <= bound, `${t.stats().cacheBytes} > ${bound}`);
        }
      };
      return t;
    });
    assert.ok(answered > 20);
    if (bound) assert.ok([...opened.values()].some((t) => t.stats().cacheBytes > bound / 2));
  }
  // The default bound: 64 MiB.
  const t = await openTables(tables("f3"));
  assert.equal(t.cache.limit, 64 * 1024 * 1024);
});
