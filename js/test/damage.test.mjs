// Damaged table directories: each is refused with one line naming the file
// (or, for a consistently damaged table, the directory and the tables whose
// answers contradict the rules of the game), and `chomp query` refuses it too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, rmSync, writeFileSync, appendFileSync, truncateSync, statSync } from "node:fs";
import { join } from "node:path";
import { ChompTablesError, openTables } from "../chomp-tables.js";
import {
  NEEDS_TABLES, cliQuery, copyTables, flip, gapsDecode, gapsEncode, levelPositions, parse3, payload12, rawFrame, readBytes,
  readManifest, rebuild12, rebuild3, relist, removeDir, roaringArrays, roaringMembers, roaringRuns, sha256hex, unzstd, writeBytes, writeManifest,
} from "./helpers.mjs";

const pad = (n) => String(n).padStart(4, "0");

/** Format 3: moves one loss of level `n` to the next rank (a win), every digest,
 * CRC, head hash, SHA-256 and the manifest checksum recomputed. Returns the
 * position that was a loss. */
function moveLoss3(dir, n) {
  const rel = `losses/L${pad(n)}.cht`;
  const data = readBytes(dir, rel);
  const h = parse3(data);
  assert.equal(h.blocks, 1);
  const ranks = gapsDecode(unzstd(h.entries[0].bytes));
  const r = ranks.find((x) => x + 1 < h.positions && !ranks.includes(x + 1));
  const moved = ranks.map((x) => (x === r ? r + 1 : x));
  writeBytes(dir, rel, rebuild3(data, () => ({ bytes: rawFrame(gapsEncode(moved)) })));
  relist(dir, rel);
  return levelPositions(n)[r];
}

/** Formats 1 and 2: the same in a roaring payload; `shard` of the level's shards. */
function moveLoss12(dir, n, sharded) {
  const m = readManifest(dir);
  const shards = sharded ? m.shards[n - 1] : [{ first: 0, positions: m.levels[n - 1].positions }];
  for (let i = 0; i < shards.length; i++) {
    const rel = sharded ? `losses/L${pad(n)}-${pad(i)}.cht` : `losses/L${pad(n)}.cht`;
    const data = readBytes(dir, rel);
    const members = roaringMembers(unzstd(payload12(data)));
    const r = members.find((x) => x + 1 < shards[i].positions && !members.includes(x + 1));
    if (r === undefined) continue;
    const moved = members.map((x) => (x === r ? r + 1 : x));
    writeBytes(dir, rel, rebuild12(data, rawFrame(roaringArrays(moved))));
    relist(dir, rel);
    return { position: levelPositions(n)[shards[i].first + r], rel };
  }
  throw new Error("no loss to move");
}

function editManifest(dir, edit) {
  const m = readManifest(dir);
  edit(m);
  writeManifest(dir, m);
}

/** Block 0 of a format 3 table replaced by `bytes(frame)` (and its count by `count(c)`), all else recomputed. */
function reblock(dir, rel, bytes, count = (c) => c) {
  writeBytes(dir, rel, rebuild3(readBytes(dir, rel), (b, e) => (b === 0 ? { bytes: bytes(Buffer.from(e.bytes)), count: count(e.count) } : null)));
  relist(dir, rel);
}

const L9 = "losses/L0009.cht";
const G9 = "grundy/G0009.cht";
const SKIPPABLE = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 7, 7, 7]);

// [name, directory, damage(dir) -> position asked (default "5 3 1"), what the message names, what it says]
const CASES = [
  // Format 3, along the chain of checks.
  ["format 3: a flipped byte in a loss block", "dmg3", (d) => flip(d, L9, -1), L9, "block 0: digest mismatch"],
  ["format 3: a flipped byte in an index page", "dmg3", (d) => flip(d, L9, parse3(readBytes(d, L9)).headLen + 3), L9, "index page 0: digest mismatch"],
  ["format 3: a flipped byte in the head", "dmg3", (d) => flip(d, L9, 12), L9, "head SHA-256 differs from manifest.json"],
  ["format 3: a flipped byte in a Grundy block", "dmg3", (d) => flip(d, G9, -2), G9, "block 0: digest mismatch"],
  ["format 3: a truncated table", "dmg3", (d) => truncateSync(join(d, L9), statSync(join(d, L9)).size - 1), L9, "truncated or padded"],
  ["format 3: a padded table", "dmg3", (d) => appendFileSync(join(d, L9), Buffer.alloc(10)), L9, "truncated or padded"],
  ["format 3: a wrong head_sha256 (manifest checksum recomputed)", "dmg3", (d) => editManifest(d, (m) => (m.files[L9].head_sha256 = sha256hex(Buffer.from("other")))), L9, "head SHA-256 differs from manifest.json"],
  ["format 3: a skippable frame before the block's frame", "dmg3", (d) => reblock(d, L9, (f) => Buffer.concat([SKIPPABLE, f])), L9, "block 0: a skippable zstd frame"],
  ["format 3: two frames in a block", "dmg3", (d) => reblock(d, L9, (f) => Buffer.concat([f, f])), L9, "block 0: bytes after the zstd frame"],
  ["format 3: a block whose count disagrees", "dmg3", (d) => reblock(d, L9, (f) => f, (c) => c + 1), L9, "block 0: holds"],
  ["format 3: a Grundy block whose count of zeros disagrees", "dmg3", (d) => reblock(d, G9, (f) => f, (c) => c + 1), G9, "zero values, its entry says"],
  ["format 3: a block entry at the wrong offset", "dmg3", (d) => { writeBytes(d, L9, rebuild3(readBytes(d, L9), () => null, { entryOffsetDelta: 1 })); relist(d, L9); }, L9, "index page 0: entry of block 0 does not fit the file"],
  ["format 3: a Grundy table in place of a loss table", "dmg3", (d) => { copyFileSync(join(d, G9), join(d, L9)); relist(d, L9); }, L9, "expected a loss table, found a grundy table"],
  ["format 3: a frame whose content checksum is wrong", "dmg3", (d) => reblock(d, L9, (f) => rawFrame(unzstd(f), { checksum: [1, 2, 3, 4] })), L9, "block 0: zstd frame checksum mismatch"],
  ["format 3: a gap longer than 3 bytes", "dmg3", (d) => reblock(d, L9, (f) => { const g = unzstd(f); return rawFrame(Buffer.concat([Buffer.from([0x80, 0x80, 0x80]), g])); }), L9, "block 0: gap longer than 3 bytes"],
  // The rules of the game: every checksum holds.
  ["format 3: a consistently damaged table (a loss moved to the next rank)", "dmg3", (d) => moveLoss3(d, 18), "losses/L0018.cht", "damaged tables: position"],
  ["format 3: a consistently changed Grundy value", "dmg3", (d) => {
    const data = readBytes(d, G9);
    const values = unzstd(parse3(data).entries[0].bytes);
    const i = values.findIndex((v) => v > 0);
    values[i] = values[i] === 1 ? 2 : 1;
    reblock(d, G9, () => rawFrame(values));
    return levelPositions(9)[i];
  }, G9, "damaged tables: position"],
  // Formats 1 and 2: whole tables.
  ["format 1: a flipped byte in a loss payload", "dmg1", (d) => flip(d, L9, 70), L9, "payload checksum mismatch"],
  ["format 1: a flipped byte in a header", "dmg1", (d) => flip(d, L9, 20), L9, "header checksum mismatch"],
  ["format 1: a flipped byte in a Grundy payload", "dmg1", (d) => flip(d, G9, -1), G9, "payload checksum mismatch"],
  ["format 1: a truncated table", "dmg1", (d) => truncateSync(join(d, L9), statSync(join(d, L9)).size - 2), L9, "truncated or padded: header announces"],
  ["format 1: a padded table", "dmg1", (d) => appendFileSync(join(d, L9), Buffer.alloc(1)), L9, "truncated or padded: header announces"],
  ["format 1: another level's table (manifest updated)", "dmg1", (d) => { copyFileSync(join(d, "losses/L0008.cht"), join(d, L9)); relist(d, L9); }, L9, "header field tiles is 8, the manifest implies 9"],
  ["format 1: a valid table that is not the one listed", "dmg1", (d) => {
    const b = readBytes(d, L9);
    b[16] = 9; // max_rows 9, its CRC recomputed: only the manifest's SHA-256 tells
    writeBytes(d, L9, rebuild12(b, payload12(b)));
  }, L9, "SHA-256 differs from manifest.json"],
  ["format 1: bytes after the zstd frame (CRCs and SHA-256 recomputed)", "dmg1", (d) => { const b = readBytes(d, L9); writeBytes(d, L9, rebuild12(b, Buffer.concat([payload12(b), Buffer.from([0])]))); relist(d, L9); }, L9, "loss payload: bytes after the zstd frame"],
  // FORMAT.md section 10 item 8: "no bytes left over" (the CLI refuses them too).
  ["format 1: a roaring bitmap with bytes after its last container", "dmg1", (d) => { const b = readBytes(d, L9); writeBytes(d, L9, rebuild12(b, rawFrame(Buffer.concat([unzstd(payload12(b)), Buffer.from([0, 0])])))); relist(d, L9); }, L9, "bytes after its last container"],
  ["format 1: a consistently damaged table (a loss moved to the next rank)", "dmg1", (d) => moveLoss12(d, 18, false).position, "losses/L0018.cht", "damaged tables: position"],
  ["format 2: a consistently damaged shard", "dmg2", (d) => moveLoss12(d, 18, true).position, "losses/L0018-", "damaged tables: position"],
  ["format 2: a shard header with the wrong shard count (CRC and SHA-256 recomputed)", "dmg2", (d) => {
    const rel = "losses/L0009-0000.cht";
    const b = readBytes(d, rel);
    b.writeUInt32LE(2, 72);
    writeBytes(d, rel, rebuild12(b, payload12(b)));
    relist(d, rel);
  }, "losses/L0009-0000.cht", "header field shards is 2, the manifest implies 1"],
  // The directory and its manifest.
  ["a missing table", "dmg3", (d) => rmSync(join(d, L9)), L9, "No such file or directory"],
  ["a table the manifest does not list", "dmg3", (d) => editManifest(d, (m) => delete m.files[L9]), L9, "not listed in manifest.json"],
  ["an unknown format_version", "dmg3", (d) => editManifest(d, (m) => (m.format_version = 4)), "manifest.json", "format version 4, this reader knows versions 1, 2 and 3"],
  ["a manifest edited without its checksum", "dmg3", (d) => {
    const p = join(d, "manifest.json");
    writeFileSync(p, readFileSync(p, "utf8").replace('"losses": 0', '"losses": 1'));
  }, "manifest.json", "manifest checksum mismatch"],
  ["a manifest with CRLF line endings", "dmg3", (d) => {
    const p = join(d, "manifest.json");
    writeFileSync(p, readFileSync(p, "utf8").replace(/\n/g, "\r\n"));
  }, "manifest.json", "carriage return"],
  ["a manifest with its fields reordered (checksum recomputed)", "dmg3", (d) => editManifest(d, (m) => {
    const v = m.tool_version;
    delete m.tool_version;
    m.tool_version = v;
  }), "manifest.json", "fields out of order"],
  ["a manifest listing a name outside the directory", "dmg3", (d) => editManifest(d, (m) => {
    const files = m.files;
    m.files = { "../x": { bytes: 1, sha256: "0".repeat(64) }, ...files };
    const checksum = m.checksum;
    delete m.checksum;
    m.checksum = checksum;
  }), "manifest.json", "not a plain relative name"],
  ["a manifest whose level size disagrees with the ranking", "dmg3", (d) => editManifest(d, (m) => (m.levels[8].positions += 1)), "manifest.json", "level 9 has 31 positions, the ranking counts 30"],
  ["a manifest in shards with no level complete and an empty shard list (absent, never empty)", "dmg2", (d) => editManifest(d, (m) => {
    Object.assign(m, { levels_complete: 0, complete: false, levels: [], shards: [], files: {} });
  }), "manifest.json", "shards is empty"],
  ["a manifest whose shards do not tile a level", "dmg2", (d) => editManifest(d, (m) => (m.shards[8][0].positions -= 1)), "manifest.json", "shards do not add up to the level's positions"],
  ["a histogram of winning moves that disagrees with its level", "f3s", (d) => editManifest(d, (m) => (m.levels[6].winning_moves_histogram[0] += 1)), "manifest.json", "histogram of winning moves disagrees with its counts"],
];

test(`${CASES.length} damaged directories: each refused, naming the file; the CLI refuses them too`, { skip: NEEDS_TABLES }, async (t) => {
  for (const [name, src, damage, file, needle, { cli = true } = {}] of CASES) {
    await t.test(name, async () => {
      const dir = copyTables(src);
      try {
        const pos = damage(dir) || "5 3 1";
        let err = null;
        try {
          await (await openTables(dir)).query(pos);
        } catch (e) {
          err = e;
        }
        assert.ok(err instanceof ChompTablesError, `not refused (${err})`);
        assert.equal(err.name, "TableError");
        assert.ok(!err.message.includes("\n"), "one line");
        assert.ok(err.message.includes(file), `${err.message} does not name ${file}`);
        assert.ok(err.message.includes(needle), `${err.message} does not say ${needle}`);
        if (needle.startsWith("damaged tables")) assert.ok(err.message.startsWith(`${dir}: damaged tables: `), err.message);
        if (!cli) return;
        const refused = await cliQuery(Array.isArray(pos) ? pos.join(" ") : pos, dir);
        assert.ok(refused.error !== undefined, `the CLI answers: ${JSON.stringify(refused.answer)}`);
        assert.ok(refused.error.includes(file), `the CLI's message does not name ${file}: ${refused.error}`);
        // The rules of the game: the CLI's message word for word.
        if (needle.startsWith("damaged tables")) assert.equal(err.message, refused.error);
      } finally {
        removeDir(dir);
      }
    });
  }
});

test("an intact copy answers, so the damage is what is refused", { skip: NEEDS_TABLES }, async () => {
  for (const src of ["dmg1", "dmg2", "dmg3"]) {
    const dir = copyTables(src);
    try {
      const t = await openTables(dir);
      assert.equal((await t.query("5 3 1")).tiles, 9);
      assert.equal((await t.query(levelPositions(18)[100])).tiles, 18);
    } finally {
      removeDir(dir);
    }
  }
});

/** A zstd checksum (low 32 bits of XXH64), for frames the readers must accept. */
async function checksumOf(bytes) {
  const { __testing } = await import("../chomp-tables.js");
  const b = Buffer.alloc(4);
  b.writeUInt32LE(Number(__testing.xxh64(bytes) & 0xffffffffn));
  return b;
}

test("what another writer may write is read alike (FORMAT.md section 11): the same answers as the CLI", { skip: NEEDS_TABLES }, async (t) => {
  const longGaps = (raw) => {
    // Each gap below 128 in the two-byte form (v | 0x80, 0): longer than needed, equal in value.
    const out = [];
    for (const g of raw) out.push(g < 0x80 ? [g | 0x80, 0] : [g]);
    return Buffer.from(out.flat());
  };
  const variants = [
    ["format 3: blocks without their content size", "dmg3", (d) => reblock(d, L9, (f) => rawFrame(unzstd(f), { size: false }))],
    ["format 3: blocks with a content checksum", "dmg3", async (d) => { const c = {}; reblock(d, L9, (f) => { c.raw = unzstd(f); return f; }); const sum = await checksumOf(c.raw); reblock(d, L9, () => rawFrame(c.raw, { checksum: sum })); }],
    ["format 3: gaps in a longer form than needed", "dmg3", (d) => {
      const h = parse3(readBytes(d, L9));
      const raw = unzstd(h.entries[0].bytes);
      assert.ok(raw.every((g) => g < 0x80));
      reblock(d, L9, () => rawFrame(longGaps(raw)));
    }],
    ["format 1: cookie 12347 and run containers", "dmg1", (d) => {
      const b = readBytes(d, L9);
      writeBytes(d, L9, rebuild12(b, rawFrame(roaringRuns(roaringMembers(unzstd(payload12(b)))))));
      relist(d, L9);
    }],
    ["format 1: a loss payload without its content size", "dmg1", (d) => {
      const b = readBytes(d, L9);
      writeBytes(d, L9, rebuild12(b, rawFrame(unzstd(payload12(b)), { size: false })));
      relist(d, L9);
    }],
  ];
  for (const [name, src, change] of variants) {
    await t.test(name, async () => {
      const dir = copyTables(src);
      try {
        await change(dir);
        for (const pos of ["5 3 1", "3 3 3", "9", "4 4 1"]) {
          const cli = await cliQuery(pos, dir);
          assert.ok(cli.answer, `the CLI refuses: ${cli.error}`);
          assert.deepStrictEqual(await (await openTables(dir)).query(pos), cli.answer);
        }
      } finally {
        removeDir(dir);
      }
    });
  }
});
