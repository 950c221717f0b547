// Shared by the tests: where scripts/js-tests.sh put the table directories,
// the CLI, a static HTTP server with Range support, and tools that damage a
// table directory (with every checksum recomputed where a test wants that).

import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, normalize, sep } from "node:path";
import assert from "node:assert/strict";
import { decompress } from "fzstd";
import { ChompTablesError } from "../chomp-tables.js";

/** The directory of table directories built by scripts/js-tests.sh (null: not run by it). */
export const TABLES = process.env.CHOMP_JS_TABLES || null;
/** The chomp binary the expected answers come from. */
export const CHOMP = process.env.CHOMP || null;
export const NEEDS_TABLES = TABLES ? false : "run by scripts/js-tests.sh (CHOMP_JS_TABLES is not set)";

export const tables = (name) => join(TABLES, name);

export function expected() {
  return JSON.parse(readFileSync(join(TABLES, "expected.json"), "utf8"));
}

/** `chomp query POS --tables DIR --json`: { answer } or { error } (the message without "error: "). */
export function cliQuery(pos, dir) {
  return new Promise((resolve) => {
    execFile(CHOMP, ["query", "--tables", dir, "--json", "--", pos], (err, stdout, stderr) => {
      if (err) resolve({ error: stderr.trim().replace(/^error: /, ""), status: err.code });
      else resolve({ answer: JSON.parse(stdout) });
    });
  });
}

/** The reader's answer as { answer } or { error }; anything but a ChompTablesError rethrown. */
export async function jsQuery(t, pos, ChompTablesError) {
  try {
    return { answer: await t.query(pos) };
  } catch (e) {
    if (!(e instanceof ChompTablesError)) throw e;
    return { error: e.message, name: e.name };
  }
}

/** Runs `cases` against the tables `open(dir)` gives; returns counts. */
export async function agree(cases, open) {
  const opened = new Map();
  let answered = 0;
  for (const c of cases) {
    if (!opened.has(c.dir)) opened.set(c.dir, await open(c.dir));
    const got = await jsQuery(opened.get(c.dir), c.pos, ChompTablesError);
    const what = `${c.dir}: ${JSON.stringify(c.pos)}`;
    if (c.answer) {
      assert.ok(got.answer, `${what}: the CLI answers, the reader refuses: ${got.error}`);
      assert.deepStrictEqual(got.answer, c.answer, what);
      answered++;
    } else {
      assert.ok(got.error !== undefined, `${what}: the CLI refuses (${c.error}), the reader answers`);
      assert.equal(got.error, c.error, what);
    }
  }
  return { answered, refused: cases.length - answered, opened };
}

// ------------------------------------------------------------------ HTTP

/** A static file server over `root` answering single `Range: bytes=a-b`
 * requests with 206 (as nginx does), or ignoring Range (`ranges: false`);
 * with `multi`, several ranges in one request with 206 multipart/byteranges
 * (as nginx does; without it such a request gets the whole file). Logs
 * every request. */
export function serveDir(root, { ranges = true, multi = false, missing = [], onPost = null } = {}) {
  const log = [];
  const server = createServer((req, res) => {
    if (req.method === "POST" && onPost) {
      const parts = [];
      req.on("data", (c) => parts.push(c));
      req.on("end", () => {
        res.writeHead(204);
        res.end();
        onPost(req.url, Buffer.concat(parts).toString("utf8"));
      });
      return;
    }
    const url = new URL(req.url, "http://x");
    const rel = decodeURIComponent(url.pathname).replace(/^\/+/, "");
    const path = normalize(join(root, rel));
    const entry = { path: rel, range: req.headers.range || null, status: 0, bytes: 0 };
    log.push(entry);
    const send = (status, headers, body) => {
      entry.status = status;
      entry.bytes = body ? body.length : 0;
      res.writeHead(status, headers);
      res.end(body);
    };
    let data;
    try {
      if (!path.startsWith(normalize(root) + sep) || missing.includes(rel) || !statSync(path).isFile()) throw new Error("no");
      data = readFileSync(path);
    } catch {
      return send(404, { "Content-Type": "text/plain" }, Buffer.from("not found"));
    }
    const spans = ranges && multi && req.headers.range ? /^bytes=(\d+-\d+(,\d+-\d+)+)$/.exec(req.headers.range) : null;
    if (spans) {
      const boundary = "00000000000000000042";
      const chunks = [];
      for (const span of spans[1].split(",")) {
        const [a, b] = span.split("-").map(Number);
        const last = Math.min(b, data.length - 1);
        chunks.push(Buffer.from(`\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes ${a}-${last}/${data.length}\r\n\r\n`));
        chunks.push(data.subarray(a, last + 1));
      }
      chunks.push(Buffer.from(`\r\n--${boundary}--\r\n`));
      return send(206, { "Content-Type": `multipart/byteranges; boundary=${boundary}` }, Buffer.concat(chunks));
    }
    const m = ranges && req.headers.range ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range) : null;
    if (m) {
      const a = Number(m[1]);
      const b = m[2] === "" ? data.length - 1 : Math.min(Number(m[2]), data.length - 1);
      if (a >= data.length || a > b) return send(416, { "Content-Range": `bytes */${data.length}` }, null);
      return send(206, { "Content-Range": `bytes ${a}-${b}/${data.length}`, "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes" }, data.subarray(a, b + 1));
    }
    send(200, { "Content-Type": rel.endsWith(".json") ? "application/json" : rel.endsWith(".js") ? "text/javascript" : rel.endsWith(".html") ? "text/html" : "application/octet-stream" }, data);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/`, log, server, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) });
    });
  });
}

/** A copy of table directory `dir` as `chomp site --pack` lays it out:
 * manifest.json and tables.pack (every file the manifest lists, in its
 * order). Returns the new directory and the `pack` option (site.json's). */
export function packTables(dir) {
  const out = mkdtempSync(join(tmpdir(), "chomp-js-pack-"));
  const manifest = readFileSync(join(dir, "manifest.json"));
  writeFileSync(join(out, "manifest.json"), manifest);
  const files = {};
  const parts = [];
  let offset = 0;
  for (const rel of Object.keys(JSON.parse(manifest.toString("utf8")).files)) {
    const data = readFileSync(join(dir, rel));
    files[rel] = [offset, data.length];
    parts.push(data);
    offset += data.length;
  }
  writeFileSync(join(out, "tables.pack"), Buffer.concat(parts));
  return { dir: out, pack: { file: "tables.pack", files } };
}

// ------------------------------------------------------------------ damage

export function sha256hex(buf) {
  return createHash("sha256").update(buf).digest("hex");
}

function sha256(buf) {
  return createHash("sha256").update(buf).digest();
}

const CRC = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A fresh copy of table directory `name` in a temporary directory. */
export function copyTables(name) {
  const dir = mkdtempSync(join(tmpdir(), `chomp-js-damage-${name}-`));
  cpSync(tables(name), dir, { recursive: true });
  return dir;
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export const readBytes = (dir, rel) => readFileSync(join(dir, rel));
export const writeBytes = (dir, rel, buf) => writeFileSync(join(dir, rel), buf);

export function flip(dir, rel, offset) {
  const b = readBytes(dir, rel);
  b[offset < 0 ? b.length + offset : offset] ^= 1;
  writeBytes(dir, rel, b);
}

export function readManifest(dir) {
  return JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
}

/** Writes a manifest in canonical form with its checksum recomputed (FORMAT.md section 3). */
export function writeManifest(dir, m) {
  m.checksum = "";
  m.checksum = sha256hex(Buffer.from(JSON.stringify(m, null, 2) + "\n"));
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(m, null, 2) + "\n");
}

/** Records file `rel` as it now is in the manifest: bytes, SHA-256 and (format 3) its head. */
export function relist(dir, rel) {
  const m = readManifest(dir);
  const data = readBytes(dir, rel);
  const e = m.files[rel];
  e.bytes = data.length;
  e.sha256 = sha256hex(data);
  if ("head_bytes" in e) {
    const h = parse3(data);
    e.head_bytes = h.headLen;
    e.head_sha256 = sha256hex(data.subarray(0, h.headLen));
  }
  writeManifest(dir, m);
}

/** The parts of a format 3 table: header fields, entries and block bytes. */
export function parse3(data) {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const u64 = (o) => dv.getUint32(o, true) + dv.getUint32(o + 4, true) * 2 ** 32;
  const h = {
    blockSize: dv.getUint32(28, true),
    positions: u64(32),
    blocks: dv.getUint32(64, true),
    pageEntries: dv.getUint32(68, true),
  };
  h.pages = Math.ceil(h.blocks / h.pageEntries);
  h.headLen = 88 + 16 * h.pages;
  h.entries = [];
  for (let b = 0; b < h.blocks; b++) {
    const o = h.headLen + 32 * b;
    const offset = u64(o);
    const len = dv.getUint32(o + 8, true);
    h.entries.push({ offset, len, count: dv.getUint32(o + 12, true), bytes: data.subarray(offset, offset + len) });
  }
  return h;
}

/** Rewrites a format 3 table with new block bytes and counts (`change(b, entry)`
 * returns { bytes, count } or nothing), every offset, digest and CRC recomputed. */
export function rebuild3(data, change, { entryOffsetDelta = 0 } = {}) {
  const h = parse3(data);
  const blocks = h.entries.map((e, b) => ({ bytes: Buffer.from(e.bytes), count: e.count, ...(change(b, e) || {}) }));
  const dataStart = h.headLen + 32 * h.blocks;
  const index = Buffer.alloc(32 * h.blocks);
  let off = dataStart;
  blocks.forEach((blk, b) => {
    const o = 32 * b;
    index.writeUInt32LE((off + (b === 0 ? entryOffsetDelta : 0)) % 2 ** 32, o);
    index.writeUInt32LE(Math.floor(off / 2 ** 32), o + 4);
    index.writeUInt32LE(blk.bytes.length, o + 8);
    index.writeUInt32LE(blk.count, o + 12);
    sha256(blk.bytes).copy(index, o + 16, 0, 16);
    off += blk.bytes.length;
  });
  const head = Buffer.from(data.subarray(0, h.headLen));
  for (let p = 0; p < h.pages; p++) {
    const page = index.subarray(32 * p * h.pageEntries, 32 * Math.min(h.blocks, (p + 1) * h.pageEntries));
    sha256(page).copy(head, 88 + 16 * p, 0, 16);
  }
  head.writeUInt32LE(off % 2 ** 32, 72);
  head.writeUInt32LE(Math.floor(off / 2 ** 32), 76);
  head.writeUInt32LE(crc32(head.subarray(88, h.headLen)), 80);
  head.writeUInt32LE(crc32(head.subarray(0, 84)), 84);
  return Buffer.concat([head, index, ...blocks.map((b) => b.bytes)]);
}

/** Rewrites a format 1 or 2 table with a new payload, its length and CRCs recomputed. */
export function rebuild12(data, payload) {
  const version = data.readUInt16LE(8);
  const hl = version === 2 ? 80 : 64;
  const head = Buffer.from(data.subarray(0, hl));
  head.writeUInt32LE(payload.length, 48);
  head.writeUInt32LE(0, 52);
  head.writeUInt32LE(crc32(payload), 56);
  head.writeUInt32LE(crc32(head.subarray(0, hl - 4)), hl - 4);
  return Buffer.concat([head, payload]);
}

export function payload12(data) {
  return data.subarray(data.readUInt16LE(8) === 2 ? 80 : 64);
}

/** A zstd frame of raw blocks (RFC 8878), which any decoder reads: with the
 * content size in its header unless `size: false`, without a checksum unless
 * `checksum` (4 bytes given, not checked by the JS reader). */
export function rawFrame(content, { size = true, checksum = null, blockMax = 1 << 17 } = {}) {
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd])];
  const n = content.length;
  const cc = checksum ? 4 : 0;
  if (size) {
    if (n < 256) parts.push(Buffer.from([0x20 | cc, n]));
    else if (n < 65536 + 256) parts.push(Buffer.from([0x60 | cc, (n - 256) & 0xff, (n - 256) >> 8]));
    else {
      const b = Buffer.alloc(5);
      b[0] = 0xa0 | cc;
      b.writeUInt32LE(n, 1);
      parts.push(b);
    }
  } else {
    const e = Math.max(0, Math.ceil(Math.log2(Math.max(n, 1))) - 10);
    parts.push(Buffer.from([cc, e << 3]));
  }
  let pos = 0;
  do {
    const len = Math.min(blockMax, n - pos);
    const last = pos + len >= n ? 1 : 0;
    const h = (len << 3) | last; // raw block
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), Buffer.from(content.subarray(pos, pos + len)));
    pos += len;
  } while (pos < n);
  if (checksum) parts.push(Buffer.from(checksum));
  return Buffer.concat(parts);
}

export const unzstd = (frame) => Buffer.from(decompress(new Uint8Array(frame)));

export function gapsDecode(raw) {
  const out = [];
  let next = 0;
  for (let i = 0; i < raw.length; ) {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = raw[i++];
      v |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) break;
    }
    out.push(next + v);
    next = next + v + 1;
  }
  return out;
}

export function gapsEncode(ranks) {
  const out = [];
  let next = 0;
  for (const r of ranks) {
    let v = r - next;
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out.push(v);
    next = r + 1;
  }
  return Buffer.from(out);
}

/** Values grouped by roaring container: high 16 bits -> low 16 bits, and the keys in order. */
function byContainer(values) {
  const groups = new Map();
  for (const v of values) {
    const k = Math.floor(v / 65536);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(v % 65536);
  }
  const keys = [...groups.keys()].sort((a, b) => a - b);
  return { groups, keys };
}

/** A roaring serialization (cookie 12346) of sorted 32-bit values, array containers only. */
export function roaringArrays(values, extra = Buffer.alloc(0)) {
  const { groups, keys } = byContainer(values);
  const head = Buffer.alloc(8 + 8 * keys.length);
  head.writeUInt32LE(12346, 0);
  head.writeUInt32LE(keys.length, 4);
  let pos = head.length;
  const bodies = keys.map((k, i) => {
    const lows = groups.get(k);
    head.writeUInt16LE(k, 8 + 4 * i);
    head.writeUInt16LE(lows.length - 1, 10 + 4 * i);
    head.writeUInt32LE(pos, 8 + 4 * keys.length + 4 * i);
    const body = Buffer.alloc(2 * lows.length);
    lows.forEach((v, j) => body.writeUInt16LE(v, 2 * j));
    pos += body.length;
    return body;
  });
  return Buffer.concat([head, ...bodies, extra]);
}

/** A roaring serialization with cookie 12347 whose containers are all run containers. */
export function roaringRuns(values) {
  const { groups, keys } = byContainer(values);
  const size = keys.length;
  const flags = Buffer.alloc(Math.ceil(size / 8), 0xff);
  const cookie = Buffer.alloc(4);
  cookie.writeUInt32LE((12347 | ((size - 1) << 16)) >>> 0);
  const desc = Buffer.alloc(4 * size);
  const bodies = keys.map((k, i) => {
    const lows = groups.get(k);
    const runs = [];
    for (const v of lows) {
      const last = runs[runs.length - 1];
      if (last && last[0] + last[1] + 1 === v) last[1]++;
      else runs.push([v, 0]);
    }
    desc.writeUInt16LE(k, 4 * i);
    desc.writeUInt16LE(lows.length - 1, 4 * i + 2);
    const body = Buffer.alloc(2 + 4 * runs.length);
    body.writeUInt16LE(runs.length, 0);
    runs.forEach(([s, l], j) => {
      body.writeUInt16LE(s, 2 + 4 * j);
      body.writeUInt16LE(l, 4 + 4 * j);
    });
    return body;
  });
  const offsets = Buffer.alloc(size >= 4 ? 4 * size : 0);
  let pos = 4 + flags.length + desc.length + offsets.length;
  if (size >= 4) bodies.forEach((b, i) => { offsets.writeUInt32LE(pos, 4 * i); pos += b.length; });
  return Buffer.concat([cookie, flags, desc, offsets, ...bodies]);
}

/** The roaring members of a serialization written by the pipeline (array and bitmap containers). */
export function roaringMembers(buf) {
  const size = buf.readUInt32LE(4);
  const out = [];
  for (let i = 0; i < size; i++) {
    const key = buf.readUInt16LE(8 + 4 * i);
    const card = buf.readUInt16LE(10 + 4 * i) + 1;
    const off = buf.readUInt32LE(8 + 4 * size + 4 * i);
    if (card <= 4096) for (let j = 0; j < card; j++) out.push(key * 65536 + buf.readUInt16LE(off + 2 * j));
    else for (let v = 0; v < 65536; v++) if ((buf[off + (v >> 3)] >> (v & 7)) & 1) out.push(key * 65536 + v);
  }
  return out;
}

/** The positions of level `n` with no bounds, in rank order (FORMAT.md section 8). */
export function levelPositions(n) {
  const out = [];
  const rec = (left, max, prefix) => {
    if (left === 0) return out.push(prefix);
    for (let v = 1; v <= Math.min(left, max); v++) rec(left - v, v, [...prefix, v]);
  };
  rec(n, n, []);
  return out.sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  });
}

export function findExecutable(names) {
  for (const name of names) {
    for (const d of (process.env.PATH || "").split(":").concat(["/usr/sbin", "/usr/bin", "/usr/local/bin"])) {
      if (d && existsSync(join(d, name))) return join(d, name);
    }
  }
  return null;
}
