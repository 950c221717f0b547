// Parts of the reader on their own: CRC-32, ranking, parsing, zstd frames,
// roaring, the canonical JSON, the vendored fzstd. Needs no table directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ChompTablesError, InvalidPosition, Ranking, TableError, __testing, crc32, parsePosition } from "../chomp-tables.js";
import { levelPositions, rawFrame, roaringArrays } from "./helpers.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const JS = join(HERE, "..");
const { zstdOneFrame, parseJson, canonicalJson, SerializedRoaring, ByteLru } = __testing;

test("CRC-32 check value of FORMAT.md section 1", () => {
  assert.equal(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
});

test("ranking: lexicographic order, sizes and unranking (FORMAT.md section 8)", () => {
  const partitions = (n) => levelPositions(n);
  for (const [rows, cols, top] of [[null, null, 14], [3, 4, 12], [8, 15, 14], [null, 5, 13], [4, null, 13]]) {
    const r = new Ranking(rows, cols, top);
    for (let n = 1; n <= top; n++) {
      const level = partitions(n).filter((p) => (rows === null || p.length <= rows) && (cols === null || p[0] <= cols));
      assert.equal(r.size(n), level.length, `${rows}x${cols} size(${n})`);
      level.forEach((p, i) => {
        assert.equal(r.rank(p), i);
        assert.deepEqual(r.unrank(n, i), p);
      });
    }
  }
  assert.equal(new Ranking(null, null, 30).rank([3, 2, 1]), 5);
  assert.equal(new Ranking(3, 3, 9).rank([3, 2, 1]), 1);
  assert.equal(new Ranking(3, 4, 12).rank([4, 2, 1]), 2);
  assert.equal(new Ranking(null, null, 12).rank([4, 2, 1]), 9);
  // p(150) = 40,853,235,313: exact in a Number.
  assert.equal(new Ranking(null, null, 150).size(150), 40853235313);
});

test("positions: text and array forms, and their errors", () => {
  assert.deepEqual(parsePosition("5 3 1"), [5, 3, 1]);
  assert.deepEqual(parsePosition(" 5 , 3,1 "), [5, 3, 1]);
  assert.deepEqual(parsePosition("03 +2 1"), [3, 2, 1]);
  assert.deepEqual(parsePosition([5, 3, 1]), [5, 3, 1]);
  assert.deepEqual(parsePosition(new Uint8Array([2, 2])), [2, 2]);
  assert.deepEqual(parsePosition([3n, 1n]), [3, 1]);
  for (const bad of [[], [2, 3], [1, 0], ["3"], [true], [1.5], [-1], 5, null, undefined, [256]]) {
    assert.throws(() => parsePosition(bad), (e) => e instanceof InvalidPosition && e instanceof ChompTablesError && !e.message.includes("\n"), String(bad));
  }
  assert.throws(() => parsePosition("3\u200b2"), { message: 'invalid position "3\\u{200b}2": row 0 is "3\\u{200b}2", not a positive integer' });
});

test("zstd: one data frame, with or without its size or a checksum; everything else refused", () => {
  const data = new Uint8Array(5000).map((_, i) => (i * 7) & 0xff);
  const sum = Buffer.alloc(4);
  sum.writeUInt32LE(Number(__testing.xxh64(data) & 0xffffffffn));
  for (const opts of [{}, { size: false }, { checksum: sum }, { size: false, checksum: sum }, { blockMax: 999 }]) {
    const f = rawFrame(data, opts);
    assert.deepEqual(zstdOneFrame(f, 5000, "f", "x"), data, JSON.stringify(opts));
    const bad = (frame, needle, limit = 5000) =>
      assert.throws(() => zstdOneFrame(frame, limit, "f", "x"), (e) => e instanceof TableError && e.message.startsWith("f: x: ") && e.message.includes(needle), needle);
    bad(Buffer.concat([f, Buffer.from([0])]), "bytes after the zstd frame");
    bad(Buffer.concat([f, f]), "bytes after the zstd frame");
    bad(f.subarray(0, f.length - 3), "truncated");
    bad(Buffer.concat([Buffer.from([0]), f]), "not a zstd frame");
    bad(f, "decodes to more than 4999 bytes", 4999);
    const skippable = Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4])]);
    bad(skippable, "skippable");
    bad(Buffer.concat([skippable, f]), "skippable");
    const reserved = Buffer.from(f);
    reserved[4] |= 8;
    bad(reserved, "reserved bit");
  }
  // The empty frame of a loss block without losses.
  assert.equal(zstdOneFrame(rawFrame(new Uint8Array(0)), 0, "f", "x").length, 0);
  // A header that lies about the size: refused before or after decoding.
  const lying = rawFrame(data);
  lying.writeUInt16LE(4352 - 256, 5); // 4352 declared, 5000 given
  assert.throws(() => zstdOneFrame(lying, 5000, "f", "x"), /the 4352 bytes its header says/);
  const short = rawFrame(data.subarray(0, 4000));
  short.writeUInt16LE(4608 - 256, 5); // 4608 declared, 4000 given
  assert.throws(() => zstdOneFrame(short, 5000, "f", "x"), /decodes to 4000 bytes, its header says 4608/);
  // A frame that needs a dictionary, a huge window.
  const dict = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x21, 7, 3]), Buffer.from([1, 0, 0])]);
  assert.throws(() => zstdOneFrame(dict, 10, "f", "x"), /needs a dictionary/);
  const huge = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8]), Buffer.from([1, 0, 0])]);
  assert.throws(() => zstdOneFrame(huge, 10, "f", "x"), /window/);
});

test("zstd: frames with a content checksum (written by libzstd) are checked", () => {
  const { xxh64 } = __testing;
  assert.equal(xxh64(new Uint8Array(0)), 0xef46db3751d8e999n);
  const frames = [
    [new Uint8Array(0), "28b52ffd240001000099e9d851"],
    [new TextEncoder().encode("a"), "28b52ffd2401090000615b6e8ca9"],
    [new TextEncoder().encode("abcabcabc"), "28b52ffd240949000061626361626361626357465217"],
    [new TextEncoder().encode("x".repeat(33)), "28b52ffd242145000010787801000dc002a6084255"],
  ];
  const big = new Uint8Array(5120).map((_, i) => i & 0xff);
  const bigFrame = "28b52ffd6400135508000410000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff010000fd32d0af299fded613";
  frames.push([big, bigFrame]);
  for (const [data, hexFrame] of frames) {
    const f = Buffer.from(hexFrame, "hex");
    assert.deepEqual(zstdOneFrame(f, data.length, "f", "x"), data);
    f[f.length - 1] ^= 1;
    assert.throws(() => zstdOneFrame(f, data.length, "f", "x"), /f: x: zstd frame checksum mismatch/);
  }
});

test("roaring: the three container kinds, both cookies, and malformed bitmaps", () => {
  const values = [1, 5, 70000, 70001, 3 * 65536 + 2];
  const b = new SerializedRoaring(roaringArrays(values), "t");
  assert.equal(b.cardinality, 5);
  assert.equal(b.maximum, 3 * 65536 + 2);
  for (let x = 0; x < 4 * 65536; x += 1) if (b.has(x) !== values.includes(x)) assert.fail(String(x));
  // Cookie 12347 with a run container (0..9, 100) and a bitmap container (even lows).
  const bitmap = Buffer.alloc(8192);
  for (let v = 0; v < 65536; v += 2) bitmap[v >> 3] |= 1 << (v & 7);
  const runs = Buffer.from([2, 0, 0, 0, 9, 0, 100, 0, 0, 0]);
  const head = Buffer.alloc(4 + 1 + 8);
  head.writeUInt32LE(12347 | (1 << 16), 0);
  head[4] = 1; // container 0 is a run container
  head.writeUInt16LE(0, 5);
  head.writeUInt16LE(10, 7);
  head.writeUInt16LE(2, 9);
  head.writeUInt16LE(32767, 11);
  const r = new SerializedRoaring(Buffer.concat([head, runs, bitmap]), "t");
  assert.equal(r.cardinality, 11 + 32768);
  assert.equal(r.maximum, 2 * 65536 + 65534);
  assert.ok(r.has(0) && r.has(9) && r.has(100) && !r.has(10) && !r.has(101));
  assert.ok(r.has(2 * 65536 + 4) && !r.has(2 * 65536 + 5) && !r.has(65536));
  const bad = (buf, needle) => assert.throws(() => {
    const x = new SerializedRoaring(buf, "t");
    for (const v of [1, 5, 3 * 65536 + 2]) x.has(v);
  }, (e) => e instanceof TableError && e.message.includes(needle), needle);
  bad(Buffer.from([0, 0, 0, 0]), "unknown cookie");
  bad(roaringArrays(values).subarray(0, 30), "truncated");
  bad(roaringArrays(values, Buffer.from([0])), "after its last container");
  const unsorted = roaringArrays([5, 1, 3 * 65536 + 2]);
  bad(unsorted, "not strictly increasing");
  const offset = roaringArrays(values);
  offset[8 + 4 * 3] += 1;
  bad(offset, "offset header says");
});

test("canonical JSON: key order kept, integers never rounded, duplicates refused", () => {
  const text = '{\n  "b": 1,\n  "a": [\n    9007199254740993,\n    "x\\u0001"\n  ],\n  "1": {},\n  "c": []\n}';
  const v = parseJson(text);
  assert.equal(canonicalJson(v), text);
  assert.equal(typeof v.a[0], "bigint");
  assert.throws(() => parseJson('{"a": 1, "a": 2}'), /duplicate key/);
  assert.throws(() => parseJson('{"a": 1} x'), /extra data/);
  assert.throws(() => parseJson("[01]"), /expected/);
});

test("the cache stays within its byte bound", () => {
  const lru = new ByteLru(100);
  for (let i = 0; i < 50; i++) {
    lru.put(i, i, 30);
    assert.ok(lru.bytes <= 100);
  }
  lru.put("big", 0, 101);
  assert.equal(lru.get("big"), undefined);
  assert.equal(lru.get(49), 49);
  assert.equal(lru.get(0), undefined);
});

test("the vendored fzstd is the installed package's ES module, with its licence", () => {
  const pkgDir = join(JS, "node_modules", "fzstd");
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const esm = pkg.exports["."].import;
  assert.equal(esm, "./esm/index.mjs");
  assert.equal(pkg.version, JSON.parse(readFileSync(join(JS, "package.json"), "utf8")).devDependencies.fzstd);
  assert.ok(readFileSync(join(JS, "vendor", "fzstd.js")).equals(readFileSync(join(pkgDir, esm))), "js/vendor/fzstd.js differs from the installed fzstd");
  assert.ok(readFileSync(join(JS, "vendor", "LICENSE-fzstd")).equals(readFileSync(join(pkgDir, "LICENSE"))));
  assert.match(readFileSync(join(JS, "vendor", "LICENSE-fzstd"), "utf8"), /MIT License/);
});

test("the module loads in a browser: no static Node import, the vendored fzstd by relative path", () => {
  const src = readFileSync(join(JS, "chomp-tables.js"), "utf8");
  const imports = [...src.matchAll(/^\s*import\s[^;]*?from\s*["']([^"']+)["']/gm)].map((m) => m[1]);
  assert.deepEqual(imports, ["./vendor/fzstd.js"]);
  assert.ok(!/\brequire\(/.test(src));
  assert.match(src, /import\("node:fs\/promises"\)/);
});

test("the type declarations declare every export of the module", async () => {
  const mod = await import("../chomp-tables.js");
  const dts = readFileSync(join(JS, "chomp-tables.d.ts"), "utf8");
  for (const name of Object.keys(mod).filter((n) => n !== "__testing")) {
    assert.match(dts, new RegExp(`export (declare )?(const|class|function|interface) ${name}\\b`), `${name} is not declared in chomp-tables.d.ts`);
  }
});
