// chomp-tables: read a chomp-tables directory (FORMAT.md, formats 1, 2 and 3)
// in the browser and in Node, with every check FORMAT.md asks of a reader.
//
//   import { openTables } from "chomp-tables";
//   const t = await openTables("https://example.org/tables/box-8x15/");
//   const answer = await t.query("5 3 1");   // what `chomp query --json` prints
//
// A port of the Python reader (python/src/chomp_tables): same structure, same
// checks, the same messages where the formats allow. Format 3 tables are read
// a block at a time along the chain of checks of FORMAT.md section 17
// (manifest -> head SHA-256 -> index page digest -> block digest); formats 1
// and 2 a whole table at a time, checked against its SHA-256. zstd is decoded
// by `fzstd` (pure JS), vendored in vendor/ and imported by relative path: the
// module works however it is installed (a folder, a tarball, copied files) and
// in a page without an import map. Node's file system module is imported
// lazily, only to read a local directory.
//
// This file is generated: `node js/build.mjs` joins the modules of js/src/
// (index.js and what it imports), each below under a rule naming it. Edit
// those and run the build; `node js/build.mjs --check` tells whether this
// file is up to date.

import { Decompress } from "./vendor/fzstd.js";

// ------------------------------------------------------------------ src/errors.js

// The errors this package throws: every one a ChompTablesError with a one-line
// message naming the file, directory or position involved.

/** Every error this package throws: one line, naming the file or directory involved. */
export class ChompTablesError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** A file of the table directory is missing, unreadable, damaged or mismatched. */
export class TableError extends ChompTablesError {}

/** The question is malformed or not covered by the tables. */
export class QuestionError extends ChompTablesError {}

/** The text or list given is not a Chomp position. */
export class InvalidPosition extends QuestionError {}

/** The position is valid but the tables do not cover it. */
export class NotInTables extends QuestionError {}

function corrupt(path, what) {
  return new TableError(`${path}: ${what}`);
}

// ------------------------------------------------------------------ src/bytes.js

// Checksums (CRC-32, SHA-256 by WebCrypto) and the little-endian reads of the
// table formats (FORMAT.md section 1).

const U32_MAX = 0xffffffff;
const TWO32 = 4294967296;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** The IEEE CRC-32 of FORMAT.md section 1 (crc32("123456789") = 0xCBF43926). */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function subtle() {
  const s = globalThis.crypto && globalThis.crypto.subtle;
  if (!s) {
    throw new ChompTablesError(
      "SHA-256 needs WebCrypto (crypto.subtle), which a browser gives only to secure pages: serve the page over https or from localhost",
    );
  }
  return s;
}

async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hex(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]];
  return s;
}

async function sha256Hex(bytes) {
  return hex(await sha256(bytes));
}

function equalBytes(a, b, n = Math.max(a.length, b.length)) {
  if (a.length < n || b.length < n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A u64 (little-endian) as a Number: exact below 2^53, larger values only compare as large. */
function u64(dv, off) {
  return dv.getUint32(off, true) + dv.getUint32(off + 4, true) * TWO32;
}

function view(bytes) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// ------------------------------------------------------------------ src/position.js

// Positions as the CLI reads them (FORMAT.md section 9), its error messages word
// for word, and the transpose.

const MAX_SIDE = 255;

// Rust's char::is_whitespace (the White_Space property), which `chomp` splits on.
const WHITESPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
  0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

function splitWhitespace(s) {
  const out = [];
  let cur = "";
  for (const ch of s) {
    if (WHITESPACE.has(ch.codePointAt(0))) {
      if (cur) out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

const NONPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}\p{Grapheme_Extend}]/u;

/** A string quoted as Rust's `{:?}` prints it (the CLI's messages quote input so). */
function rustDebug(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c === 0) out += "\\0";
    else if (ch !== " " && NONPRINTABLE.test(ch)) out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return out + '"';
}

class Problem extends Error {}

function checkRows(rows) {
  if (!rows.length) throw new Problem('empty position: a position has at least the poisoned tile, e.g. "1"');
  const tooLarge = `position too large: more than ${MAX_SIDE} rows or columns`;
  if (rows.length > MAX_SIDE) throw new Problem(tooLarge);
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i];
    if (v === 0) throw new Problem(`row ${i} has length 0; list only non-empty rows`);
    if (v > MAX_SIDE) throw new Problem(tooLarge);
    if (i > 0 && v > rows[i - 1]) {
      throw new Problem(`row ${i} (${v}) is longer than the row above it (${rows[i - 1]}); rows must not increase`);
    }
  }
}

function parseText(text) {
  const rows = [];
  const pieces = text.split(",");
  for (const piece of pieces) {
    const before = rows.length;
    for (const token of splitWhitespace(piece)) {
      const index = rows.length;
      const digits = token.startsWith("+") ? token.slice(1) : token;
      if (!/^[0-9]+$/.test(digits)) throw new Problem(`row ${index} is ${rustDebug(token)}, not a positive integer`);
      const value = Number(digits);
      if (value > U32_MAX) {
        if (/^[0-9]+$/.test(token)) throw new Problem(`position too large: more than ${MAX_SIDE} rows or columns`);
        throw new Problem(`row ${index} is ${rustDebug(token)}, not a positive integer`);
      }
      rows.push(value);
    }
    if (pieces.length > 1 && rows.length === before) {
      throw new Problem(`row ${rows.length} is missing: two commas with nothing between them, or a comma at an end`);
    }
  }
  return rows;
}

function reprList(list) {
  return "[" + list.map((v) => (typeof v === "string" ? JSON.stringify(v) : String(v))).join(", ") + "]";
}

/** The rows of a position given as text ("5 3 1", "5,3,1", FORMAT.md section 9)
 * or as an array of row lengths; throws `InvalidPosition` with chomp's message. */
export function parsePosition(pos) {
  if (typeof pos === "string") {
    try {
      const rows = parseText(pos);
      checkRows(rows);
      return rows;
    } catch (e) {
      if (e instanceof Problem) throw new InvalidPosition(`invalid position ${rustDebug(pos)}: ${e.message}`);
      throw e;
    }
  }
  if (!Array.isArray(pos) && !ArrayBuffer.isView(pos)) {
    throw new InvalidPosition(`invalid position ${String(pos)}: give a string such as "3 2 1" or an array of row lengths`);
  }
  const rows = Array.from(pos, (v) => (typeof v === "bigint" && v >= 0n && v <= BigInt(U32_MAX) ? Number(v) : v));
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
      throw new InvalidPosition(`invalid position ${reprList(rows)}: row ${i} is ${typeof v === "string" ? JSON.stringify(v) : String(v)}, not a positive integer`);
    }
  }
  try {
    checkRows(rows);
  } catch (e) {
    if (e instanceof Problem) throw new InvalidPosition(`invalid position ${reprList(rows)}: ${e.message}`);
    throw e;
  }
  return rows;
}

/** The transpose of a position (its columns as rows), e.g. [3, 1] -> [2, 1, 1]. */
export function conjugate(rows) {
  const out = [];
  for (let c = 0; c < rows[0]; c++) {
    let k = 0;
    while (k < rows.length && rows[k] > c) k++;
    out.push(k);
  }
  return out;
}

const formatRows = (rows) => rows.join(" ");
const sum = (rows) => rows.reduce((a, b) => a + b, 0);
const plural = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;

// ------------------------------------------------------------------ src/ranking.js

// The ranking of positions within a level (FORMAT.md section 8).

/** The ranking of FORMAT.md section 8: positions of a level in lexicographic
 * order of their rows. Counts are Numbers, exact while a level holds at most
 * 2^53 positions (every term of a rank is at most its level's size); the
 * reader refuses larger levels. Built up to level `top`. */
export class Ranking {
  constructor(rows, cols, top) {
    this.top = top;
    // A row bound of at least `top` never binds: treat it as unbounded.
    this.rows = rows !== null && rows < top ? rows : null;
    this.maxPart = cols !== null ? Math.min(cols, top) : top;
    const planes = this.rows === null ? 1 : this.rows + 1;
    const sdim = top + 1;
    const mdim = this.maxPart + 1;
    this.sdim = sdim;
    this.mdim = mdim;
    const t = new Float64Array(planes * sdim * mdim);
    for (let p = 0; p < planes; p++) {
      for (let s = 0; s < sdim; s++) {
        const base = (p * sdim + s) * mdim;
        for (let m = 0; m < mdim; m++) {
          let v;
          if (s === 0) v = 1;
          else if (m === 0 || (this.rows !== null && p === 0)) v = 0;
          else {
            v = t[base + m - 1];
            if (s >= m) {
              const below = this.rows !== null ? p - 1 : 0;
              v += t[(below * sdim + s - m) * mdim + m];
            }
          }
          t[base + m] = v;
        }
      }
    }
    this.table = t;
  }

  /** Partitions of `s` into at most `r` parts (null: any number), each at most `m`. */
  q(s, r, m) {
    if (s < 0) return 0;
    m = Math.min(m, this.maxPart);
    const plane = this.rows === null ? 0 : r !== null ? Math.min(r, this.rows) : this.rows;
    return this.table[(plane * this.sdim + s) * this.mdim + m];
  }

  /** Positions of level `n` (0 outside 1..top). */
  size(n) {
    if (n < 1 || n > this.top) return 0;
    return this.q(n, this.rows, this.maxPart);
  }

  /** The rank of a position of the universe within its level. */
  rank(rows) {
    let suffix = sum(rows);
    let r = 0;
    for (let i = 0; i < rows.length; i++) {
      r += this.q(suffix, this.rows === null ? null : this.rows - i, rows[i] - 1);
      suffix -= rows[i];
    }
    return r;
  }

  /** The position of level `n` with rank `rank`. */
  unrank(n, rank) {
    if (!(rank >= 0 && rank < this.size(n))) throw new RangeError(`rank ${rank} is not below the size ${this.size(n)} of level ${n}`);
    const rows = [];
    let s = n;
    let prev = this.maxPart;
    while (s > 0) {
      const left = this.rows === null ? null : this.rows - rows.length;
      let v = Math.min(s, prev);
      while (this.q(s, left, v - 1) > rank) v--;
      rank -= this.q(s, left, v - 1);
      rows.push(v);
      s -= v;
      prev = v;
    }
    return rows;
  }
}

// ------------------------------------------------------------------ src/json.js

// JSON in canonical form (FORMAT.md section 3): a strict parser that keeps key
// order and large integers, and the canonical printer.

// Key order of every parsed object (JS objects put integer-like keys first).
const KEY_ORDER = new WeakMap();
const keysOf = (o) => KEY_ORDER.get(o) || Object.keys(o);

class JsonProblem extends Error {}

/** A strict JSON parser that keeps each object's key order, refuses duplicate
 * keys and gives integers beyond 2^53 as BigInt (so they are never rounded). */
function parseJson(text) {
  let i = 0;
  const n = text.length;
  const fail = (what) => {
    throw new JsonProblem(`${what} at character ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  const value = (depth) => {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (i >= n) fail("unexpected end of data");
    const c = text[i];
    if (c === "{") {
      i++;
      const obj = {};
      const keys = [];
      ws();
      if (text[i] === "}") {
        i++;
      } else {
        for (;;) {
          ws();
          if (text[i] !== '"') fail("expected a string key");
          const key = string();
          if (keys.includes(key)) fail(`duplicate key ${JSON.stringify(key)}`);
          ws();
          if (text[i] !== ":") fail("expected ':'");
          i++;
          const v = value(depth + 1);
          Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
          keys.push(key);
          ws();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === "}") {
            i++;
            break;
          }
          fail("expected ',' or '}'");
        }
      }
      KEY_ORDER.set(obj, keys);
      return obj;
    }
    if (c === "[") {
      i++;
      const arr = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail("expected a value");
    i = NUMBER.lastIndex;
    if (m[1] === undefined && m[2] === undefined) {
      const v = Number(m[0]);
      return Number.isSafeInteger(v) ? v : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const string = () => {
    i++; // the opening quote
    let out = "";
    for (;;) {
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return out;
      }
      if (c < 0x20) fail("control character in a string");
      if (c === 0x5c) {
        const e = text[i + 1];
        const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
        if (e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail("invalid escape");
      } else {
        out += text[i];
        i++;
      }
    }
  };
  const v = value(0);
  ws();
  if (i !== n) fail("extra data");
  return v;
}

/** The canonical text of a JSON value (FORMAT.md section 3): two-space
 * indentation, `"key": value`, keys in the parsed order — what Python's
 * json.dumps(indent=2, ensure_ascii=False) and serde_json's pretty printer write. */
function canonicalJson(v, indent = "") {
  if (v === null) return "null";
  if (typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : JSON.stringify(v);
  if (typeof v === "string") return JSON.stringify(v);
  const inner = indent + "  ";
  if (Array.isArray(v)) {
    if (!v.length) return "[]";
    return "[\n" + v.map((x) => inner + canonicalJson(x, inner)).join(",\n") + "\n" + indent + "]";
  }
  const keys = keysOf(v);
  if (!keys.length) return "{}";
  return "{\n" + keys.map((k) => inner + JSON.stringify(k) + ": " + canonicalJson(v[k], inner)).join(",\n") + "\n" + indent + "}";
}

// ------------------------------------------------------------------ src/manifest.js

// manifest.json: parsed and checked before any table is read (FORMAT.md
// sections 3, 10, 14 and 17), and the universe it describes.

const FORMAT_NAME = "chomp-tables";
const VERSIONS = [1, 2, 3];
const MANIFEST_FIELDS = ["format", "format_version", "tool_version", "universe", "grundy_max_tiles", "levels_complete", "complete", "levels", "files", "checksum"];
const MANIFEST_FIELDS_SHARDED = [
  "format", "format_version", "tool_version", "universe", "grundy_max_tiles", "shard_positions",
  "levels_complete", "complete", "levels", "shards", "files", "checksum",
];
const SHARD_FIELDS = ["first", "positions", "losses"];
const UNIVERSE_FIELDS = ["rows", "cols", "tiles"];
const LEVEL_FIELDS = ["tiles", "positions", "losses"];
const LEVEL_FIELDS_GRUNDY = [...LEVEL_FIELDS, "grundy_histogram"];
// A run that counted winning moves (count_moves) ends each level with these.
const LEVEL_FIELDS_MOVES = ["wins_one_move", "wins_several_moves"];
// And, on a level with Grundy values, may add this last (FORMAT.md section 3).
const LEVEL_FIELD_HISTOGRAM = "winning_moves_histogram";
const FILE_FIELDS = ["bytes", "sha256"];
const FILE_FIELDS_HEAD = ["bytes", "sha256", "head_bytes", "head_sha256"];

function checkInt(v, what, path, nullable = false) {
  if (v === null && nullable) return;
  if (typeof v === "bigint" && v >= 0n) throw corrupt(path, `invalid manifest: ${what} is ${v}, beyond 2^53, more than this reader handles`);
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw corrupt(path, `invalid manifest: ${what} is not a non-negative integer`);
}

/** Whether a name listed in a manifest stays inside the table directory (FORMAT.md section 2). */
function plainRelativeName(name) {
  if (typeof name !== "string" || !name || /[\\:\0]/.test(name)) return false;
  return name.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

function canonicalManifest(m, checksum) {
  const saved = m.checksum;
  m.checksum = checksum;
  try {
    return canonicalJson(m) + "\n";
  } finally {
    m.checksum = saved;
  }
}

const isLevelSharded = (m) => m.format_version === 2 || (m.format_version === 3 && "shard_positions" in m);

async function parseManifest(raw, path) {
  if (raw.includes(0x0d)) throw corrupt(path, "manifest not in canonical form: it holds a carriage return (CRLF line endings?)");
  let m;
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
    m = parseJson(text);
  } catch (e) {
    if (e instanceof JsonProblem) throw corrupt(path, `invalid manifest: ${e.message}`);
    if (e instanceof TypeError) throw corrupt(path, "invalid manifest: not UTF-8");
    throw corrupt(path, `invalid manifest: ${e && e.message}`);
  }
  await checkManifest(m, path, raw);
  return m;
}

async function checkManifest(m, path, raw) {
  if (!isObject(m)) throw corrupt(path, "invalid manifest: not a JSON object");
  // The format and its version first: a newer manifest may differ in anything else.
  if (m.format !== FORMAT_NAME) throw corrupt(path, `invalid manifest: format is ${JSON.stringify(m.format)}, not "${FORMAT_NAME}"`);
  const version = m.format_version;
  if (!VERSIONS.includes(version)) {
    throw corrupt(path, `format version ${typeof version === "string" ? JSON.stringify(version) : String(version)}, this reader knows versions 1, 2 and 3`);
  }
  const sharded = isLevelSharded(m);
  let fields = sharded ? MANIFEST_FIELDS_SHARDED : MANIFEST_FIELDS;
  if (sharded && !("shards" in m) && m.levels_complete === 0) fields = fields.filter((f) => f !== "shards");
  if (version === 3 && "checks" in m) fields = [...fields.slice(0, -2), "checks", ...fields.slice(-2)];
  const moves = m.count_moves === true;
  if (moves) {
    // Before levels_complete (FORMAT.md section 3).
    const at = fields.indexOf("levels_complete");
    fields = [...fields.slice(0, at), "count_moves", ...fields.slice(at)];
  }
  const keys = keysOf(m);
  const missing = fields.filter((k) => !keys.includes(k));
  const extra = keys.filter((k) => !fields.includes(k)).sort();
  if (missing.length || extra.length) {
    throw corrupt(path, `invalid manifest: missing fields ${pyList(missing)}, unknown fields ${pyList(extra)}`);
  }
  if (!sameList(keys, fields)) throw corrupt(path, "manifest not in canonical form: fields out of order");
  if (typeof m.checksum !== "string") throw corrupt(path, "invalid manifest: checksum is not a string");
  const enc = new TextEncoder();
  if ((await sha256Hex(enc.encode(canonicalManifest(m, "")))) !== m.checksum) {
    throw corrupt(path, "manifest checksum mismatch (damaged or edited)");
  }
  if (!equalBytes(enc.encode(canonicalManifest(m, m.checksum)), raw)) {
    throw corrupt(path, "manifest not in canonical form (damaged or edited)");
  }
  if (typeof m.tool_version !== "string" || typeof m.complete !== "boolean") {
    throw corrupt(path, "invalid manifest: tool_version or complete has the wrong type");
  }
  const u = m.universe;
  if (!isObject(u) || keysOf(u).length !== 3 || !UNIVERSE_FIELDS.every((k) => keysOf(u).includes(k))) {
    throw corrupt(path, "invalid manifest: universe must hold rows, cols and tiles");
  }
  if (!sameList(keysOf(u), UNIVERSE_FIELDS)) throw corrupt(path, "manifest not in canonical form: universe fields out of order");
  for (const k of UNIVERSE_FIELDS) {
    checkInt(u[k], "universe." + k, path, true);
    if (u[k] === 0) throw corrupt(path, `invalid manifest: universe.${k} is 0`);
  }
  if (u.tiles === null && (u.rows === null || u.cols === null)) throw corrupt(path, "invalid manifest: infinite universe");
  checkInt(m.grundy_max_tiles, "grundy_max_tiles", path);
  checkInt(m.levels_complete, "levels_complete", path);
  const levels = m.levels;
  if (!Array.isArray(levels) || levels.length !== m.levels_complete) {
    throw corrupt(path, "invalid manifest: levels must list exactly levels_complete entries");
  }
  levels.forEach((level, i) => {
    if (!isObject(level) || level.tiles !== i + 1) throw corrupt(path, `invalid manifest: levels[${i}] is not level ${i + 1}`);
    const ks = keysOf(level);
    const extra = moves ? LEVEL_FIELDS_MOVES : [];
    const allowed = [[...LEVEL_FIELDS, ...extra], [...LEVEL_FIELDS_GRUNDY, ...extra]];
    if (moves) allowed.push([...LEVEL_FIELDS_GRUNDY, ...extra, LEVEL_FIELD_HISTOGRAM]);
    if (!allowed.some((a) => sameList(ks, a))) {
      const tail = extra.map((f) => `, ${f}`).join("") + (moves ? `[, ${LEVEL_FIELD_HISTOGRAM}]` : "");
      throw corrupt(path, `invalid manifest: levels[${i}] has fields ${pyList(ks)}, not ${pyList(LEVEL_FIELDS)}[, grundy_histogram]${tail}`);
    }
    checkInt(level.positions, `levels[${i}].positions`, path);
    checkInt(level.losses, `levels[${i}].losses`, path);
    for (const f of extra) checkInt(level[f], `levels[${i}].${f}`, path);
    if (moves && level.losses + level.wins_one_move + level.wins_several_moves !== level.positions) {
      throw corrupt(path, `invalid manifest: levels[${i}]: losses and wins do not add up to its positions`);
    }
    if ("grundy_histogram" in level) {
      const h = level.grundy_histogram;
      if (!Array.isArray(h)) throw corrupt(path, `invalid manifest: levels[${i}].grundy_histogram is not a list`);
      h.forEach((c, g) => checkInt(c, `levels[${i}].grundy_histogram[${g}]`, path));
    }
    if (LEVEL_FIELD_HISTOGRAM in level) checkWinningMoves(level, i, path);
  });
  if (sharded && "shards" in m) checkShards(m, path);
  if ("checks" in m) checkChecks(m, path);
  const files = m.files;
  if (!isObject(files)) throw corrupt(path, "invalid manifest: files is not an object");
  const names = keysOf(files);
  const sorted = [...names].sort((a, b) => compareUtf8(a, b));
  if (!sameList(names, sorted)) throw corrupt(path, "manifest not in canonical form: files not sorted by name");
  for (const rel of names) {
    const entry = files[rel];
    // Checked before any file is opened: a listed name never leaves the directory.
    if (!plainRelativeName(rel)) {
      throw corrupt(path, `invalid manifest: files lists ${JSON.stringify(rel)}, not a plain relative name (absolute, or with an empty, '.' or '..' component)`);
    }
    if (!isObject(entry) || typeof entry.sha256 !== "string") throw corrupt(path, `invalid manifest: files[${JSON.stringify(rel)}] lacks sha256`);
    const table = version === 3 && (rel.startsWith("losses/") || rel.startsWith("grundy/"));
    const want = table ? FILE_FIELDS_HEAD : FILE_FIELDS;
    if (!sameList(keysOf(entry), want)) {
      throw corrupt(path, `invalid manifest: files[${JSON.stringify(rel)}] has fields ${pyList(keysOf(entry))}, not ${pyList(want)}`);
    }
    checkInt(entry.bytes, `files[${JSON.stringify(rel)}].bytes`, path);
    if (table) {
      checkInt(entry.head_bytes, `files[${JSON.stringify(rel)}].head_bytes`, path);
      if (typeof entry.head_sha256 !== "string" || !/^[0-9a-f]{64}$/.test(entry.head_sha256) || entry.head_bytes >= entry.bytes) {
        throw corrupt(path, `invalid manifest: files[${JSON.stringify(rel)}] has a head longer than the file or no head SHA-256`);
      }
    }
  }
}

/** Byte order of the UTF-8 encodings (the order of the manifest's file names). */
function compareUtf8(a, b) {
  const enc = new TextEncoder();
  const x = enc.encode(a);
  const y = enc.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

function checkChecks(m, path) {
  const checks = m.checks;
  let last = 0;
  if (!Array.isArray(checks) || !checks.length) throw corrupt(path, "invalid manifest: checks is not a non-empty list");
  for (const c of checks) {
    if (!isObject(c) || !sameList(keysOf(c), LEVEL_FIELDS)) {
      throw corrupt(path, `invalid manifest: a checks entry has fields other than ${pyList(LEVEL_FIELDS)}`);
    }
    for (const k of LEVEL_FIELDS) checkInt(c[k], `checks[].${k}`, path);
    const n = c.tiles;
    if (n <= last || n > m.levels_complete) throw corrupt(path, `invalid manifest: checks: level ${n} out of order or not complete`);
    const level = m.levels[n - 1];
    if (c.positions > level.positions || c.losses > c.positions) {
      throw corrupt(path, `invalid manifest: checks: level ${n} counted with more positions than it has, or more losses than positions`);
    }
    last = n;
  }
}

function checkShards(m, path) {
  const limit = m.shard_positions;
  checkInt(limit, "shard_positions", path);
  if (!(limit >= 1 && limit <= TWO32)) throw corrupt(path, `invalid manifest: shard_positions ${limit} is not in 1..=2^32`);
  const shards = m.shards;
  // Absent, never empty, while no level is complete (FORMAT.md section 3).
  if (Array.isArray(shards) && !shards.length) {
    throw corrupt(path, "invalid manifest: shards is empty (the field is absent while no level is complete)");
  }
  if (!Array.isArray(shards) || shards.length !== m.levels_complete) {
    throw corrupt(path, "invalid manifest: shards must list exactly levels_complete levels");
  }
  shards.forEach((ss, i) => {
    const level = m.levels[i];
    if (!Array.isArray(ss) || !ss.length) throw corrupt(path, `invalid manifest: shards[${i}] is not a non-empty list`);
    let next = 0;
    let losses = 0;
    for (const s of ss) {
      if (!isObject(s) || !sameList(keysOf(s), SHARD_FIELDS)) {
        throw corrupt(path, `invalid manifest: a shard of level ${i + 1} has fields other than ${pyList(SHARD_FIELDS)}`);
      }
      for (const k of SHARD_FIELDS) checkInt(s[k], `shards[${i}].${k}`, path);
      if (s.first !== next || !(s.positions >= 1 && s.positions <= limit) || s.losses > s.positions) {
        throw corrupt(path, `invalid manifest: level ${i + 1}: shards do not tile the level in order`);
      }
      next += s.positions;
      losses += s.losses;
    }
    if (next !== level.positions || losses !== level.losses) {
      throw corrupt(path, `invalid manifest: level ${i + 1}: shards do not add up to the level's positions and losses`);
    }
  });
}

function universeTop(u) {
  let top = u.tiles !== null ? u.tiles : Infinity;
  if (u.rows !== null && u.cols !== null) top = Math.min(top, u.rows * u.cols);
  return top;
}

function universeBounds(u) {
  const parts = [];
  if (u.rows !== null) parts.push(plural(u.rows, "row"));
  if (u.cols !== null) parts.push(plural(u.cols, "column"));
  if (u.tiles !== null) parts.push(plural(u.tiles, "tile"));
  const last = parts.pop() || "";
  if (!parts.length) return `at most ${last}`;
  return `at most ${parts.join(", ")} and ${last}`;
}

// A level's histogram of winning moves: counts without trailing zeros that
// add up to its positions, its losses first, then its wins with one winning
// move, then those with several.
function checkWinningMoves(level, i, path) {
  const h = level[LEVEL_FIELD_HISTOGRAM];
  if (!Array.isArray(h) || h.length === 0 || (h.length > 1 && h[h.length - 1] === 0)) {
    throw corrupt(path, `invalid manifest: levels[${i}].${LEVEL_FIELD_HISTOGRAM} is not a list of counts ending in a non-zero one`);
  }
  h.forEach((c, k) => checkInt(c, `levels[${i}].${LEVEL_FIELD_HISTOGRAM}[${k}]`, path));
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const got = [sum(h), h[0], h.length > 1 ? h[1] : 0, sum(h.slice(2))];
  const want = [level.positions, level.losses, level.wins_one_move, level.wins_several_moves];
  if (!sameList(got, want)) {
    throw corrupt(path, `invalid manifest: levels[${i}]: its histogram of winning moves disagrees with its counts`);
  }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const pyList = (l) => "[" + l.map((k) => `'${k}'`).join(", ") + "]";

// ------------------------------------------------------------------ src/zstd.js

// zstd: each compressed payload or block is exactly one zstd data frame, walked
// and bounded before `fzstd` (vendored in vendor/) decodes it; XXH64 for the
// frame checksums a writer may add.

const ZSTD_MAX_WINDOW = 1 << 27; // libzstd's default limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT)
const ZSTD_BLOCK_MAX = 1 << 17;
const TOO_LARGE = Symbol("too large");

/** Walks a zstd frame's header and block headers without decoding: checks that
 * `data` is exactly one data frame (RFC 8878) and returns what its header says. */
function zstdFrameInfo(data, path, what) {
  const n = data.length;
  const truncated = () => corrupt(path, `${what}: zstd frame truncated`);
  if (n < 4) throw corrupt(path, `${what}: not a zstd frame`);
  const magic = (data[0] | (data[1] << 8) | (data[2] << 16) | (data[3] << 24)) >>> 0;
  if (magic !== 0xfd2fb528) {
    if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) throw corrupt(path, `${what}: a skippable zstd frame, not a data frame`);
    throw corrupt(path, `${what}: not a zstd frame`);
  }
  if (n < 5) throw truncated();
  const fhd = data[4];
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const checksum = (fhd >> 2) & 1;
  const didFlag = fhd & 3;
  if (fhd & 8) throw corrupt(path, `${what}: bad zstd frame header: reserved bit set`);
  let pos = 5;
  let window = null;
  if (!single) {
    if (pos >= n) throw truncated();
    const wd = data[pos++];
    const base = 2 ** (10 + (wd >> 3));
    window = base + (base / 8) * (wd & 7);
  }
  const didSize = [0, 1, 2, 4][didFlag];
  if (pos + didSize > n) throw truncated();
  let did = 0;
  for (let i = 0; i < didSize; i++) did += data[pos + i] * 2 ** (8 * i);
  pos += didSize;
  if (did !== 0) throw corrupt(path, `${what}: zstd frame needs a dictionary`);
  const fcsSize = fcsFlag === 0 ? single : [0, 2, 4, 8][fcsFlag];
  if (pos + fcsSize > n) throw truncated();
  let contentSize = null;
  if (fcsSize) {
    contentSize = 0;
    for (let i = 0; i < fcsSize; i++) contentSize += data[pos + i] * 2 ** (8 * i);
    if (fcsSize === 2) contentSize += 256;
  }
  pos += fcsSize;
  if (single) window = contentSize;
  let rawOut = 0; // bytes that raw and RLE blocks give, known without decoding
  for (;;) {
    if (pos + 3 > n) throw truncated();
    const h = data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16);
    const last = h & 1;
    const type = (h >> 1) & 3;
    const size = h >>> 3;
    pos += 3;
    if (type === 3) throw corrupt(path, `${what}: bad zstd frame: reserved block type`);
    if (size > ZSTD_BLOCK_MAX) throw corrupt(path, `${what}: bad zstd frame: a block of ${size} bytes, more than 128 KiB`);
    if (type === 1) {
      pos += 1;
      rawOut += size;
    } else {
      pos += size;
      if (type === 0) rawOut += size;
    }
    if (pos > n) throw truncated();
    if (last) break;
  }
  if (checksum) pos += 4;
  if (pos > n) throw truncated();
  if (pos < n) throw corrupt(path, `${what}: bytes after the zstd frame`);
  if (contentSize !== null && rawOut > contentSize) {
    throw corrupt(path, `${what}: zstd frame holds more than the ${contentSize} bytes its header says`);
  }
  return { contentSize, window, rawOut, checksum: checksum === 1 };
}

const XXH_P1 = 0x9e3779b185ebca87n;
const XXH_P2 = 0xc2b2ae3d27d4eb4fn;
const XXH_P3 = 0x165667b19e3779f9n;
const XXH_P4 = 0x85ebca77c2b2ae63n;
const XXH_P5 = 0x27d4eb2f165667c5n;
const M64 = (1n << 64n) - 1n;
const rotl64 = (x, r) => ((x << r) | (x >> (64n - r))) & M64;
const xxhRound = (acc, v) => (rotl64((acc + v * XXH_P2) & M64, 31n) * XXH_P1) & M64;
const xxhMerge = (h, v) => (((h ^ xxhRound(0n, v)) * XXH_P1 + XXH_P4) & M64);

/** XXH64 with seed 0 (what a zstd frame's content checksum keeps the low 32 bits of). */
function xxh64(bytes) {
  const dv = view(bytes);
  const n = bytes.length;
  let i = 0;
  let h;
  if (n >= 32) {
    let v1 = (XXH_P1 + XXH_P2) & M64;
    let v2 = XXH_P2;
    let v3 = 0n;
    let v4 = (M64 + 1n - XXH_P1) & M64;
    for (; i + 32 <= n; i += 32) {
      v1 = xxhRound(v1, dv.getBigUint64(i, true));
      v2 = xxhRound(v2, dv.getBigUint64(i + 8, true));
      v3 = xxhRound(v3, dv.getBigUint64(i + 16, true));
      v4 = xxhRound(v4, dv.getBigUint64(i + 24, true));
    }
    h = (rotl64(v1, 1n) + rotl64(v2, 7n) + rotl64(v3, 12n) + rotl64(v4, 18n)) & M64;
    h = xxhMerge(xxhMerge(xxhMerge(xxhMerge(h, v1), v2), v3), v4);
  } else h = XXH_P5;
  h = (h + BigInt(n)) & M64;
  for (; i + 8 <= n; i += 8) h = (rotl64(h ^ xxhRound(0n, dv.getBigUint64(i, true)), 27n) * XXH_P1 + XXH_P4) & M64;
  if (i + 4 <= n) {
    h = (rotl64(h ^ ((BigInt(dv.getUint32(i, true)) * XXH_P1) & M64), 23n) * XXH_P2 + XXH_P3) & M64;
    i += 4;
  }
  for (; i < n; i++) h = (rotl64(h ^ ((BigInt(bytes[i]) * XXH_P5) & M64), 11n) * XXH_P1) & M64;
  h ^= h >> 33n;
  h = (h * XXH_P2) & M64;
  h ^= h >> 29n;
  h = (h * XXH_P3) & M64;
  h ^= h >> 32n;
  return h;
}

/** Decodes `data` as exactly one zstd data frame of at most `limit` bytes
 * (FORMAT.md sections 10 and 17): the frame's structure is walked first (one
 * frame, no skippable frame, nothing after it), a declared content size is
 * compared with `limit` before decoding, and decoding stops past `limit`. */
function zstdOneFrame(data, limit, path, what) {
  data = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const info = zstdFrameInfo(data, path, what);
  const tooLarge = () => corrupt(path, `${what}: zstd frame decodes to more than ${limit} bytes`);
  if (info.contentSize !== null && info.contentSize > limit) throw tooLarge();
  if (info.rawOut > limit) throw tooLarge();
  if (info.window > ZSTD_MAX_WINDOW) {
    throw corrupt(path, `${what}: zstd frame with a window of ${info.window} bytes, more than the ${ZSTD_MAX_WINDOW} this reader allows`);
  }
  const chunks = [];
  let total = 0;
  const d = new Decompress((chunk) => {
    total += chunk.length;
    if (total > limit) throw TOO_LARGE;
    if (chunk.length) chunks.push(chunk);
  });
  try {
    d.push(data, true);
  } catch (e) {
    if (e === TOO_LARGE) throw tooLarge();
    throw corrupt(path, `${what}: bad zstd frame: ${e && e.message ? e.message : e}`);
  }
  if (info.contentSize !== null && total !== info.contentSize) {
    throw corrupt(path, `${what}: zstd frame decodes to ${total} bytes, its header says ${info.contentSize}`);
  }
  let out = chunks.length === 1 ? chunks[0] : new Uint8Array(total);
  if (chunks.length > 1) {
    let o = 0;
    for (const c of chunks) {
      out.set(c, o);
      o += c.length;
    }
  }
  if (info.checksum) {
    // Optional in the format (the writer writes none), checked where present, as libzstd does.
    const want = view(data).getUint32(data.length - 4, true);
    if (Number(xxh64(out) & 0xffffffffn) !== want) throw corrupt(path, `${what}: zstd frame checksum mismatch`);
  }
  return out;
}

// ------------------------------------------------------------------ src/roaring.js

// Roaring bitmaps read in place from their portable serialization (FORMAT.md
// section 6): the loss sets of formats 1 and 2.

const ROARING_NO_RUNS = 12346;
const ROARING_RUNS = 12347;
const ARRAY = 0;
const BITMAP = 1;
const RUN = 2;

function popcount8(b) {
  b = b - ((b >> 1) & 0x55);
  b = (b & 0x33) + ((b >> 2) & 0x33);
  return (b + (b >> 4)) & 0x0f;
}

/** A roaring bitmap read in place from its portable serialization: loading
 * checks the structure; each container's contents are checked the first time
 * a lookup reads it, the last one at once (for the largest member). */
class SerializedRoaring {
  constructor(buf, path) {
    this.buf = buf;
    this.dv = view(buf);
    this.path = path;
    const n = buf.length;
    const dv = this.dv;
    const need = (pos, size, what) => {
      if (pos + size > n) throw corrupt(path, `roaring bitmap truncated in ${what}`);
    };
    need(0, 4, "cookie");
    const cookie = dv.getUint32(0, true);
    let size;
    let pos;
    let runFlags = null;
    let hasOffsets;
    if (cookie === ROARING_NO_RUNS) {
      need(4, 4, "container count");
      size = dv.getUint32(4, true);
      pos = 8;
      hasOffsets = true;
    } else if ((cookie & 0xffff) === ROARING_RUNS) {
      size = (cookie >>> 16) + 1;
      const nflags = Math.ceil(size / 8);
      need(4, nflags, "run flags");
      runFlags = buf.subarray(4, 4 + nflags);
      pos = 4 + nflags;
      hasOffsets = size >= 4;
    } else {
      throw corrupt(path, `roaring bitmap: unknown cookie ${cookie}`);
    }
    if (size > 65536) throw corrupt(path, `roaring bitmap: ${size} containers, more than 65536`);
    need(pos, 4 * size, "descriptive header");
    const keys = new Uint32Array(size);
    const cards = new Uint32Array(size);
    for (let i = 0; i < size; i++) {
      keys[i] = dv.getUint16(pos + 4 * i, true);
      cards[i] = dv.getUint16(pos + 4 * i + 2, true) + 1;
    }
    pos += 4 * size;
    let offsets = null;
    if (hasOffsets) {
      need(pos, 4 * size, "offset header");
      offsets = new Uint32Array(size);
      for (let i = 0; i < size; i++) offsets[i] = dv.getUint32(pos + 4 * i, true);
      pos += 4 * size;
    }
    for (let i = 1; i < size; i++) if (keys[i] <= keys[i - 1]) throw corrupt(path, "roaring bitmap: container keys not increasing");
    const kinds = new Uint8Array(size);
    const starts = new Uint32Array(size);
    for (let i = 0; i < size; i++) {
      if (offsets !== null && offsets[i] !== pos) {
        throw corrupt(path, `roaring bitmap: container ${i} at byte ${pos}, offset header says ${offsets[i]}`);
      }
      starts[i] = pos;
      if (runFlags !== null && (runFlags[i >> 3] >> (i & 7)) & 1) {
        need(pos, 2, "run container");
        kinds[i] = RUN;
        pos += 2 + 4 * dv.getUint16(pos, true);
      } else if (cards[i] <= 4096) {
        kinds[i] = ARRAY;
        pos += 2 * cards[i];
      } else {
        kinds[i] = BITMAP;
        pos += 8192;
      }
      if (pos > n) throw corrupt(path, `roaring bitmap truncated in container ${i}`);
    }
    if (pos !== n) throw corrupt(path, `roaring bitmap: ${n - pos} bytes after its last container`);
    this.keys = keys;
    this.cards = cards;
    this.kinds = kinds;
    this.starts = starts;
    this.checked = new Uint8Array(size);
    this.cardinality = cards.reduce((a, b) => a + b, 0);
    this.maximum = null;
    if (size) this.maximum = keys[size - 1] * 65536 + this.containerMax(size - 1);
  }

  /** Checks container `i`'s contents (once). */
  check(i) {
    if (this.checked[i]) return;
    const { buf, dv, path } = this;
    const pos = this.starts[i];
    const card = this.cards[i];
    const kind = this.kinds[i];
    if (kind === ARRAY) {
      for (let j = 1; j < card; j++) {
        if (dv.getUint16(pos + 2 * j, true) <= dv.getUint16(pos + 2 * j - 2, true)) {
          throw corrupt(path, `roaring bitmap: array container ${i} not strictly increasing`);
        }
      }
    } else if (kind === BITMAP) {
      let c = 0;
      for (let j = 0; j < 8192; j++) c += popcount8(buf[pos + j]);
      if (c !== card) throw corrupt(path, `roaring bitmap: bitmap container ${i} cardinality mismatch`);
    } else {
      const nruns = dv.getUint16(pos, true);
      let count = 0;
      let prevEnd = -1;
      for (let r = 0; r < nruns; r++) {
        const s = dv.getUint16(pos + 2 + 4 * r, true);
        const l = dv.getUint16(pos + 4 + 4 * r, true);
        const e = s + l;
        if (e > 0xffff || s <= prevEnd) throw corrupt(path, `roaring bitmap: run container ${i} malformed`);
        count += l + 1;
        prevEnd = e;
      }
      if (count !== card) throw corrupt(path, `roaring bitmap: run container ${i} holds ${count} values, header says ${card}`);
    }
    this.checked[i] = 1;
  }

  containerMax(i) {
    this.check(i);
    const pos = this.starts[i];
    const kind = this.kinds[i];
    if (kind === ARRAY) return this.dv.getUint16(pos + 2 * (this.cards[i] - 1), true);
    if (kind === BITMAP) {
      for (let j = 8191; j >= 0; j--) {
        const b = this.buf[pos + j];
        if (b) return j * 8 + 31 - Math.clz32(b);
      }
      return -1;
    }
    const nruns = this.dv.getUint16(pos, true);
    return this.dv.getUint16(pos + 2 + 4 * (nruns - 1), true) + this.dv.getUint16(pos + 4 + 4 * (nruns - 1), true);
  }

  has(x) {
    const key = Math.floor(x / 65536);
    const low = x % 65536;
    const keys = this.keys;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    if (lo === keys.length || keys[lo] !== key) return false;
    const i = lo;
    this.check(i);
    const pos = this.starts[i];
    const dv = this.dv;
    const kind = this.kinds[i];
    if (kind === BITMAP) return ((this.buf[pos + (low >> 3)] >> (low & 7)) & 1) === 1;
    if (kind === ARRAY) {
      let a = 0;
      let b = this.cards[i];
      while (a < b) {
        const mid = (a + b) >> 1;
        const v = dv.getUint16(pos + 2 * mid, true);
        if (v === low) return true;
        if (v < low) a = mid + 1;
        else b = mid;
      }
      return false;
    }
    // Run container: the last run starting at or before `low`.
    let a = 0;
    let b = dv.getUint16(pos, true);
    while (a < b) {
      const mid = (a + b) >> 1;
      if (dv.getUint16(pos + 2 + 4 * mid, true) <= low) a = mid + 1;
      else b = mid;
    }
    if (a === 0) return false;
    const s = dv.getUint16(pos + 2 + 4 * (a - 1), true);
    return low <= s + dv.getUint16(pos + 4 + 4 * (a - 1), true);
  }
}

// ------------------------------------------------------------------ src/whole.js

// Table files of formats 1 and 2, read whole and checked (FORMAT.md sections 5,
// 7 and 14): the header, the loss set, Grundy values by block.

const MAGIC = [0x43, 0x48, 0x4f, 0x4d, 0x50, 0x54, 0x42, 0x4c]; // "CHOMPTBL"
const KIND_LOSSES = 1;
const KIND_GRUNDY = 2;
const KIND_NAMES = { 1: "losses", 2: "grundy" };
const KIND_WORDS = { 1: "loss", 2: "Grundy" };

function parseTable(path, data, expectKind) {
  if (data.length < 64) throw corrupt(path, `truncated: ${data.length} bytes, shorter than the 64-byte header`);
  const dv = view(data);
  if (!equalBytes(data, MAGIC, 8)) throw corrupt(path, "not a chomp table (wrong magic bytes)");
  const version = dv.getUint16(8, true);
  if (version !== 1 && version !== 2) throw corrupt(path, `table format version ${version}, this reader knows versions 1 and 2`);
  const kind = dv.getUint16(10, true);
  let headerLen = 64;
  let headerCrc = dv.getUint32(60, true);
  let shard = null;
  if (version === 2) {
    if (data.length < 80) throw corrupt(path, `truncated: ${data.length} bytes, shorter than the 80-byte header`);
    headerLen = 80;
    shard = { shard: dv.getUint32(60, true), first: u64(dv, 64), shards: dv.getUint32(72, true) };
    headerCrc = dv.getUint32(76, true);
    if (shard.shard >= shard.shards) throw corrupt(path, "shard index beyond the level's shard count");
  }
  if (crc32(data.subarray(0, headerLen - 4)) !== headerCrc) throw corrupt(path, "header checksum mismatch");
  if (!(kind in KIND_NAMES)) throw corrupt(path, `unknown table kind ${kind}`);
  if (expectKind !== undefined && kind !== expectKind) {
    throw corrupt(path, `expected a ${KIND_NAMES[expectKind]} table, found a ${KIND_NAMES[kind]} table`);
  }
  const payloadLen = u64(dv, 48);
  if (payloadLen !== data.length - headerLen) {
    throw corrupt(path, `truncated or padded: header announces ${payloadLen} payload bytes, file has ${data.length - headerLen}`);
  }
  const payload = data.subarray(headerLen);
  if (crc32(payload) !== dv.getUint32(56, true)) throw corrupt(path, "payload checksum mismatch");
  const positions = u64(dv, 32);
  const losses = u64(dv, 40);
  const blockSize = dv.getUint32(28, true);
  if (positions === 0 || positions > (shard === null ? U32_MAX : TWO32)) throw corrupt(path, `level size ${positions} out of range`);
  if (losses > positions) throw corrupt(path, "more losses than positions");
  if (kind === KIND_LOSSES && blockSize !== 0) throw corrupt(path, "loss table with a non-zero block size");
  if (kind === KIND_GRUNDY && blockSize === 0) throw corrupt(path, "Grundy table with block size 0");
  const header = {
    kind: KIND_NAMES[kind],
    version,
    tiles: dv.getUint32(12, true),
    max_rows: dv.getUint32(16, true),
    max_cols: dv.getUint32(20, true),
    max_tiles: dv.getUint32(24, true),
    block_size: blockSize,
    positions,
    losses,
    payload_len: payloadLen,
  };
  if (shard !== null) Object.assign(header, shard);
  return { header, payload };
}

/** The largest decompressed loss payload accepted (FORMAT.md section 10, item 8). */
function lossPayloadBound(positions) {
  return (Math.floor(positions / 65536) + 1) * 8208 + 64;
}

/** The loss set of one table of format 1 or 2 (ranks relative to its first position). */
class LossTable {
  constructor(path, header, payload) {
    const raw = zstdOneFrame(payload, lossPayloadBound(header.positions), path, "loss payload");
    this.path = path;
    this.bitmap = new SerializedRoaring(raw, path);
    if (this.bitmap.cardinality !== header.losses) throw corrupt(path, `holds ${this.bitmap.cardinality} losses, header says ${header.losses}`);
    if (this.bitmap.maximum !== null && this.bitmap.maximum >= header.positions) throw corrupt(path, "a loss rank lies beyond the level");
    this.bytes = 64 + raw.length + 13 * this.bitmap.keys.length;
  }

  has(rank) {
    return this.bitmap.has(rank);
  }
}

/** A Grundy table of format 1 or 2 (FORMAT.md section 7); blocks decode on demand. */
class GrundyTable {
  constructor(path, header, payload) {
    this.path = path;
    this.header = header;
    this.payload = payload;
    const bs = header.block_size;
    this.blockSize = bs;
    this.blocks = Math.ceil(header.positions / bs);
    const indexLen = 8 * (this.blocks + 1);
    if (payload.length < indexLen) throw corrupt(path, "block index truncated");
    const dv = view(payload);
    const offs = new Float64Array(this.blocks + 1);
    for (let b = 0; b <= this.blocks; b++) offs[b] = u64(dv, 8 * b);
    let ok = offs[0] === indexLen && offs[this.blocks] === payload.length;
    for (let b = 0; ok && b < this.blocks; b++) if (offs[b] > offs[b + 1]) ok = false;
    if (!ok) throw corrupt(path, "inconsistent block index");
    this.offsets = offs;
    this.bytes = 64 + payload.length;
  }

  /** The values of block `b`, checked to have the right length. */
  block(b) {
    const bs = this.blockSize;
    const want = Math.min(bs, this.header.positions - b * bs);
    const frame = this.payload.subarray(this.offsets[b], this.offsets[b + 1]);
    const raw = zstdOneFrame(frame, want, this.path, `block ${b}`);
    if (raw.length !== want) throw corrupt(this.path, `block ${b} decodes to ${raw.length} bytes, expected ${want}`);
    return raw;
  }
}

// ------------------------------------------------------------------ src/blocks.js

// Format 3 (FORMAT.md section 17): a table's checked head, its index pages
// and its blocks, each checked against its digest along the chain
// manifest -> head SHA-256 -> index page digest -> block digest.

const FIXED_LEN = 88;
const DIGEST_LEN = 16;
const ENTRY_LEN = 32;

/** The checked head of a format 3 table: header fields and page digests. */
class Head {
  constructor(path, data) {
    if (data.length < FIXED_LEN) throw corrupt(path, `truncated: ${data.length} bytes, shorter than the ${FIXED_LEN}-byte header`);
    const dv = view(data);
    if (!equalBytes(data, MAGIC, 8)) throw corrupt(path, "not a chomp table (wrong magic bytes)");
    const version = dv.getUint16(8, true);
    if (version !== 3) throw corrupt(path, `table format version ${version}, expected 3`);
    if (crc32(data.subarray(0, FIXED_LEN - 4)) !== dv.getUint32(84, true)) throw corrupt(path, "header checksum mismatch");
    const kind = dv.getUint16(10, true);
    if (!(kind in KIND_NAMES)) throw corrupt(path, `unknown table kind ${kind}`);
    const h = {
      kind: KIND_NAMES[kind],
      version,
      tiles: dv.getUint32(12, true),
      max_rows: dv.getUint32(16, true),
      max_cols: dv.getUint32(20, true),
      max_tiles: dv.getUint32(24, true),
      block_size: dv.getUint32(28, true),
      positions: u64(dv, 32),
      losses: u64(dv, 40),
      first: u64(dv, 48),
      shard: dv.getUint32(56, true),
      shards: dv.getUint32(60, true),
      blocks: dv.getUint32(64, true),
      page_entries: dv.getUint32(68, true),
      file_len: u64(dv, 72),
    };
    if (h.shard >= h.shards) throw corrupt(path, "shard index beyond the level's shard count");
    if (!(h.block_size >= 1 && h.block_size <= 65536)) throw corrupt(path, "block size not in 1 ..= 65536");
    if (!(h.positions >= 1 && h.positions <= TWO32)) throw corrupt(path, "positions not in 1 ..= 2^32");
    if (h.losses > h.positions) throw corrupt(path, "more losses than positions");
    if (h.blocks !== Math.ceil(h.positions / h.block_size)) throw corrupt(path, "block count does not match positions and block size");
    if (!(h.page_entries >= 1 && h.page_entries <= 65536)) throw corrupt(path, "entries per index page not in 1 ..= 65536");
    h.pages = Math.ceil(h.blocks / h.page_entries);
    h.data_start = FIXED_LEN + DIGEST_LEN * h.pages + ENTRY_LEN * h.blocks;
    if (h.file_len < h.data_start) throw corrupt(path, "file length shorter than its head and index");
    const end = FIXED_LEN + DIGEST_LEN * h.pages;
    if (data.length < end) throw corrupt(path, `truncated: ${data.length} bytes, shorter than the ${end}-byte head`);
    const digests = data.slice(FIXED_LEN, end);
    if (crc32(digests) !== dv.getUint32(80, true)) throw corrupt(path, "index page digests checksum mismatch");
    this.path = path;
    this.header = h;
    this.length = end;
    this.digests = digests;
  }

  blockPositions(b) {
    const h = this.header;
    return Math.min(h.block_size, h.positions - b * h.block_size);
  }

  /** [offset, length] of index page `p` in the file. */
  pageSpan(p) {
    const h = this.header;
    const first = p * h.page_entries;
    const entries = Math.min(h.page_entries, h.blocks - first);
    return [this.length + first * ENTRY_LEN, entries * ENTRY_LEN];
  }

  /** Checks index page `p` against its digest; returns its entries. */
  async parsePage(p, data) {
    const h = this.header;
    const [, length] = this.pageSpan(p);
    if (data.length !== length) throw corrupt(this.path, `truncated: index page ${p} has ${data.length} bytes, expected ${length}`);
    const d = await sha256(data);
    if (!equalBytes(d, this.digests.subarray(DIGEST_LEN * p, DIGEST_LEN * (p + 1)), DIGEST_LEN)) {
      throw corrupt(this.path, `index page ${p}: digest mismatch`);
    }
    const n = length / ENTRY_LEN;
    const dv = view(data);
    const page = {
      offsets: new Float64Array(n),
      lens: new Uint32Array(n),
      counts: new Uint32Array(n),
      digests: data.slice(0),
    };
    const firstBlock = p * h.page_entries;
    let expected = p === 0 ? h.data_start : u64(dv, 0);
    for (let i = 0; i < n; i++) {
      const b = firstBlock + i;
      const offset = u64(dv, ENTRY_LEN * i);
      const len = dv.getUint32(ENTRY_LEN * i + 8, true);
      const count = dv.getUint32(ENTRY_LEN * i + 12, true);
      const end = offset + len;
      if (offset !== expected || offset < h.data_start || end > h.file_len || (b === h.blocks - 1 && end !== h.file_len) || count > this.blockPositions(b)) {
        throw corrupt(this.path, `index page ${p}: entry of block ${b} does not fit the file`);
      }
      page.offsets[i] = offset;
      page.lens[i] = len;
      page.counts[i] = count;
      expected = end;
    }
    page.bytes = 64 + 48 * n;
    return page;
  }

  async checkBlock(b, page, i, data) {
    if (data.length !== page.lens[i]) throw corrupt(this.path, `truncated: block ${b} has ${data.length} bytes, expected ${page.lens[i]}`);
    const d = await sha256(data);
    if (!equalBytes(d, page.digests.subarray(ENTRY_LEN * i + 16, ENTRY_LEN * i + 32), DIGEST_LEN)) {
      throw corrupt(this.path, `block ${b}: digest mismatch`);
    }
  }

  /** The loss ranks of block `b` (relative to the block), increasing. */
  async lossBlock(b, page, i, data) {
    await this.checkBlock(b, page, i, data);
    const count = page.counts[i];
    const what = `block ${b}`;
    const raw = zstdOneFrame(data, 3 * count, this.path, what);
    const positions = this.blockPositions(b);
    const out = new Uint16Array(raw.length);
    let k = 0;
    let next = 0;
    let j = 0;
    while (j < raw.length) {
      let gap = 0;
      let shift = 0;
      for (;;) {
        if (j >= raw.length) throw corrupt(this.path, `${what}: truncated gap`);
        if (shift > 14) throw corrupt(this.path, `${what}: gap longer than 3 bytes`);
        const byte = raw[j++];
        gap |= (byte & 0x7f) << shift;
        shift += 7;
        if (byte < 0x80) break;
      }
      const rank = next + gap;
      if (rank >= positions) throw corrupt(this.path, `${what}: a loss rank lies beyond the block`);
      out[k++] = rank;
      next = rank + 1;
    }
    if (k !== count) throw corrupt(this.path, `${what}: holds ${k} losses, its entry says ${count}`);
    return out.slice(0, k);
  }

  /** The values of block `b`. */
  async grundyBlock(b, page, i, data) {
    await this.checkBlock(b, page, i, data);
    const want = this.blockPositions(b);
    const what = `block ${b}`;
    const raw = zstdOneFrame(data, want, this.path, what);
    if (raw.length !== want) throw corrupt(this.path, `${what}: decodes to ${raw.length} values, expected ${want}`);
    let zeros = 0;
    for (let j = 0; j < raw.length; j++) if (raw[j] === 0) zeros++;
    if (zeros !== page.counts[i]) throw corrupt(this.path, `${what}: holds ${zeros} zero values, its entry says ${page.counts[i]}`);
    return raw;
  }
}

// ------------------------------------------------------------------ src/cache.js

// The cache of checked, decoded pages, blocks and tables.

/** Least recently used entries, bounded by the bytes they hold. */
class ByteLru {
  constructor(limit) {
    this.limit = limit;
    this.bytes = 0;
    this.map = new Map();
  }

  get(key) {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  put(key, value, size) {
    if (size > this.limit) return;
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.bytes -= old.size;
    }
    this.map.set(key, { value, size });
    this.bytes += size;
    while (this.bytes > this.limit) {
      const [k, e] = this.map.entries().next().value;
      this.map.delete(k);
      this.bytes -= e.size;
    }
  }
}

// ------------------------------------------------------------------ src/tables.js

// The reader itself: an open table directory, and what it answers of a
// position (`chomp query --json`), checked against the rules of the game.

/** Format-3 tables up to this size are read in one request (a head, a page
 * and a block would be three), kept beside the heads of the opened tables. */
export const SMALL_TABLE_BYTES = 4 * 1024;

const MAX_TOP = 1024;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The levels a run has completed, in words (as the Rust reader says it). */
function completedLevels(complete) {
  if (complete === 0) return "no level is complete yet: a run that has just started, or was stopped before its first checkpoint";
  if (complete === 1) return "only level 1 is complete";
  return `levels 1-${complete} are complete`;
}

const pad4 = (n) => String(n).padStart(4, "0");

/** An open table directory. Build it with `openTables`. */
export class Tables {
  constructor(src, manifest, options) {
    this.src = src;
    this.dir = src.label;
    this.manifestPath = src.path("manifest.json");
    /** The checked manifest.json. */
    this.manifest = manifest;
    this._stats = src.stats;
    const m = manifest;
    const u = m.universe;
    this.rowsBound = u.rows;
    this.colsBound = u.cols;
    this.tilesBound = u.tiles;
    const path = this.manifestPath;
    const top = universeTop(u);
    if (top > MAX_TOP) throw corrupt(path, `invalid manifest: universe with ${top} levels is beyond what version 1 supports`);
    this.top = top;
    this.levelsComplete = m.levels_complete;
    this.grundyMaxTiles = m.grundy_max_tiles;
    if (this.levelsComplete > top || this.grundyMaxTiles > top) {
      throw corrupt(path, `invalid manifest: levels beyond the universe's largest level ${top}`);
    }
    // Ranks are needed only in complete levels. The count table has
    // (R + 1)(L + 1)(C + 1) entries: where that passes 2^25, some level holds
    // far more than 2^53 positions (refused below anyway), so refuse first.
    const L = this.levelsComplete;
    const entries = (this.rowsBound !== null && this.rowsBound < L ? this.rowsBound + 1 : 1) * (L + 1) * (Math.min(this.colsBound ?? L, L) + 1);
    if (entries > 2 ** 25) throw corrupt(path, `invalid manifest: ${L} levels of this universe hold more than 2^53 positions, more than this reader handles`);
    this.ranking = new Ranking(this.rowsBound, this.colsBound, L);
    m.levels.forEach((level, i) => {
      const size = this.ranking.size(i + 1);
      if (size > MAX_SAFE) throw corrupt(path, `invalid manifest: level ${i + 1} has more than 2^53 positions, more than this reader handles`);
      if (level.positions !== size) {
        throw corrupt(path, `invalid manifest: level ${i + 1} has ${level.positions} positions, the ranking counts ${size}`);
      }
    });
    this.sharded = isLevelSharded(m);
    this.blocked = m.format_version === 3;
    this.shards = this.sharded
      ? (m.shards || []).map((ss) => ss.map((s) => [s.first, s.positions, s.losses]))
      : m.levels.map((lv) => [[0, lv.positions, lv.losses]]);
    this.firsts = this.shards.map((ss) => ss.map((s) => s[0]));
    this.cache = new ByteLru(options.cacheBytes);
    this.pending = new Map();
    this.heads = new Map();
  }

  /** Bytes read (or transferred) and requests made so far, and bytes held by the cache. */
  stats() {
    return { bytesRead: this._stats.bytesRead, requests: this._stats.requests, cacheBytes: this.cache.bytes };
  }

  // ---------------------------------------------------------------- files

  tableName(kind, n, shard) {
    const [letter, sub] = kind === KIND_LOSSES ? ["L", "losses"] : ["G", "grundy"];
    return this.sharded ? `${sub}/${letter}${pad4(n)}-${pad4(shard)}.cht` : `${sub}/${letter}${pad4(n)}.cht`;
  }

  expected(n, shard, version) {
    const [first, positions, losses] = this.shards[n - 1][shard];
    const want = {
      version,
      tiles: n,
      max_rows: this.rowsBound || 0,
      max_cols: this.colsBound || 0,
      max_tiles: this.tilesBound || 0,
      positions,
      losses,
    };
    if (version !== 1) Object.assign(want, { shard, first, shards: this.shards[n - 1].length });
    return want;
  }

  checkExpected(path, header, want) {
    for (const [k, v] of Object.entries(want)) {
      if (header[k] !== v) throw corrupt(path, `header field ${k} is ${header[k]}, the manifest implies ${v}`);
    }
  }

  entry(rel) {
    const files = this.manifest.files;
    const e = Object.prototype.hasOwnProperty.call(files, rel) ? files[rel] : undefined;
    if (e === undefined) throw new TableError(`${this.src.path(rel)}: not listed in manifest.json`);
    return e;
  }

  /** `make()` once per key while it runs: concurrent callers share one promise;
   * a result is put in the cache (checked data only) with the size it reports. */
  load(key, make) {
    const hit = this.cache.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let p = this.pending.get(key);
    if (!p) {
      p = (async () => {
        const { value, bytes } = await make();
        this.cache.put(key, value, bytes);
        return value;
      })();
      this.pending.set(key, p);
      const done = () => this.pending.delete(key);
      p.then(done, done);
    }
    return p;
  }

  async readExact(rel, path, entry, offset, length) {
    const { data, total } = await this.src.readRange(rel, offset, length);
    if (total !== null && total !== entry.bytes) throw corrupt(path, `truncated or padded: ${total} bytes, manifest.json says ${entry.bytes}`);
    if (data.length !== length) {
      throw corrupt(path, `truncated: ${data.length} bytes at offset ${offset}, expected ${length}`);
    }
    return data;
  }

  /** Format 3: table `shard` of level `n`, its head read and checked (FORMAT.md section 17, checks 1-3). */
  blockFile(kind, n, shard) {
    const key = `${kind}:${n}:${shard}`;
    let p = this.heads.get(key);
    if (!p) {
      p = this.openBlockFile(kind, n, shard);
      this.heads.set(key, p);
      p.catch(() => {
        if (this.heads.get(key) === p) this.heads.delete(key);
      });
    }
    return p;
  }

  async openBlockFile(kind, n, shard) {
    const rel = this.tableName(kind, n, shard);
    const path = this.src.path(rel);
    const entry = this.entry(rel);
    // A small table is read in one request, its pages and blocks then taken
    // from these bytes (and checked along the chain as if read one by one).
    const whole = entry.bytes <= SMALL_TABLE_BYTES ? await this.readExact(rel, path, entry, 0, entry.bytes) : null;
    const data = whole ? whole.subarray(0, entry.head_bytes) : await this.readExact(rel, path, entry, 0, entry.head_bytes);
    if ((await sha256Hex(data)) !== entry.head_sha256) throw corrupt(path, "head SHA-256 differs from manifest.json");
    const head = new Head(path, data);
    if (head.length !== entry.head_bytes || head.header.file_len !== entry.bytes) {
      throw corrupt(path, "head length or file length differs from manifest.json");
    }
    const h = head.header;
    if (h.kind !== KIND_NAMES[kind]) throw corrupt(path, `expected a ${KIND_WORDS[kind]} table, found a ${h.kind} table`);
    this.checkExpected(path, h, this.expected(n, shard, 3));
    return { rel, path, entry, head, whole };
  }

  /** Bytes `offset .. offset + length` of a format-3 table: from its bytes read whole, or read now. */
  span(f, offset, length) {
    if (f.whole) return Promise.resolve(f.whole.subarray(offset, offset + length));
    return this.readExact(f.rel, f.path, f.entry, offset, length);
  }

  /** Format 3: the decoded block holding rank `rank` of a table, and the rank in it. */
  async block(kind, n, shard, rank) {
    const f = await this.blockFile(kind, n, shard);
    const h = f.head.header;
    if (!(rank >= 0 && rank < h.positions)) throw corrupt(f.path, `rank ${rank} lies beyond the table's ${h.positions} positions`);
    const b = Math.floor(rank / h.block_size);
    const within = rank - b * h.block_size;
    const p = Math.floor(b / h.page_entries);
    const i = b - p * h.page_entries;
    const page = await this.load(`${f.rel}#page${p}`, async () => {
      const [off, length] = f.head.pageSpan(p);
      const pg = await f.head.parsePage(p, await this.span(f, off, length));
      return { value: pg, bytes: pg.bytes };
    });
    const block = await this.load(`${f.rel}#block${b}`, async () => {
      const data = await this.span(f, page.offsets[i], page.lens[i]);
      const value = kind === KIND_LOSSES ? await f.head.lossBlock(b, page, i, data) : await f.head.grundyBlock(b, page, i, data);
      return { value, bytes: 64 + value.byteLength };
    });
    return { block, within, path: f.path };
  }

  /** Formats 1 and 2: table `shard` of level `n`, read whole and checked (FORMAT.md sections 10 and 14). */
  wholeTable(kind, n, shard) {
    const rel = this.tableName(kind, n, shard);
    return this.load(`${rel}#table`, async () => {
      const entry = this.entry(rel);
      const path = this.src.path(rel);
      const data = await this.src.readAll(rel);
      // The structure first (more precise messages), then the manifest's size and SHA-256.
      const { header, payload } = parseTable(path, data, kind);
      if (data.length !== entry.bytes) throw corrupt(path, `${data.length} bytes, manifest.json says ${entry.bytes}`);
      if ((await sha256Hex(data)) !== entry.sha256.toLowerCase()) throw corrupt(path, "SHA-256 differs from manifest.json");
      const [, positions] = this.shards[n - 1][shard];
      if (!this.sharded && positions !== this.ranking.size(n)) {
        throw corrupt(path, `level ${n} has ${positions} positions, the ranking counts ${this.ranking.size(n)}`);
      }
      this.checkExpected(path, header, this.expected(n, shard, this.sharded ? 2 : 1));
      const value = kind === KIND_LOSSES ? new LossTable(path, header, payload) : new GrundyTable(path, header, payload);
      return { value, bytes: value.bytes };
    });
  }

  /** [shard index, rank within the shard] of rank `rank` of level `n`. */
  shardOf(n, rank) {
    const firsts = this.firsts[n - 1];
    let lo = 0;
    let hi = firsts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (firsts[mid] <= rank) lo = mid + 1;
      else hi = mid;
    }
    return [lo - 1, rank - firsts[lo - 1]];
  }

  async isLossRank(n, rank) {
    const [shard, r] = this.shardOf(n, rank);
    if (this.blocked) {
      const { block, within } = await this.block(KIND_LOSSES, n, shard, r);
      let lo = 0;
      let hi = block.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (block[mid] < within) lo = mid + 1;
        else hi = mid;
      }
      return lo < block.length && block[lo] === within;
    }
    return (await this.wholeTable(KIND_LOSSES, n, shard)).has(r);
  }

  async grundyAt(n, rank) {
    if (n > Math.min(this.grundyMaxTiles, this.levelsComplete)) return null;
    const [shard, r] = this.shardOf(n, rank);
    if (this.blocked) {
      const { block, within } = await this.block(KIND_GRUNDY, n, shard, r);
      return block[within];
    }
    const table = await this.wholeTable(KIND_GRUNDY, n, shard);
    const b = Math.floor(r / table.blockSize);
    const values = await this.load(`${this.tableName(KIND_GRUNDY, n, shard)}#block${b}`, async () => {
      const v = table.block(b);
      return { value: v, bytes: 64 + v.length };
    });
    return values[r - b * table.blockSize];
  }

  // ---------------------------------------------------------------- positions

  inside(rows) {
    return (this.rowsBound === null || rows.length <= this.rowsBound) && (this.colsBound === null || rows[0] <= this.colsBound) && sum(rows) <= this.top;
  }

  /** [level, rank] of a position, found by its transpose when only that fits the tables. */
  locate(rows) {
    let found = this.inside(rows) ? rows : null;
    if (found === null) {
      const conj = conjugate(rows);
      found = this.inside(conj) ? conj : null;
    }
    const n = sum(rows);
    if (found === null) {
      const size = `${plural(rows.length, "row")}, ${plural(rows[0], "column")}, ${plural(n, "tile")}`;
      throw new NotInTables(`position ${formatRows(rows)} (${size}) is outside the tables (${universeBounds(this.manifest.universe)})`);
    }
    if (n > this.levelsComplete) throw new NotInTables(`level ${n} is not in the tables (${completedLevels(this.levelsComplete)})`);
    return [n, this.ranking.rank(found)];
  }

  async value(rows) {
    const [n, rank] = this.locate(rows);
    const [loss, g] = await Promise.all([this.isLossRank(n, rank), this.grundyAt(n, rank)]);
    return { n, loss, g };
  }

  nameOf(kind, rows) {
    try {
      const [n, rank] = this.locate(rows);
      return this.tableName(kind, n, this.shardOf(n, rank)[0]);
    } catch {
      return "?";
    }
  }

  /** What the tables say of a position against what they say of its children
   * (FORMAT.md section 10): a contradiction is damage, never an answer. */
  checkRules(rows, loss, g, moves) {
    const fail = (what) => new TableError(`${this.dir}: damaged tables: ${what}`);
    const losses = (p) => this.nameOf(KIND_LOSSES, p);
    const values = (p) => this.nameOf(KIND_GRUNDY, p);
    const p = formatRows(rows);
    const losing = moves.find((m) => m.outcome === "loss");
    if (loss && losing) {
      throw fail(`position ${p} is a loss in ${losses(rows)}, but its move (${losing.move[0]},${losing.move[1]}) leads to ${formatRows(losing.position)}, a loss in ${losses(losing.position)}`);
    }
    if (!loss && !losing) throw fail(`position ${p} is a win in ${losses(rows)}, but none of its moves leads to a loss`);
    if (g !== null) {
      if ((g === 0) !== loss) throw fail(`position ${p} has Grundy value ${g} in ${values(rows)} but is a ${loss ? "loss" : "win"} in ${losses(rows)}`);
      const seen = new Uint8Array(257);
      for (const m of moves) {
        if (m.grundy === null) throw fail(`position ${p} has a Grundy value in ${values(rows)}, a child of it none`);
        seen[m.grundy] = 1;
      }
      let mex = 0;
      while (seen[mex]) mex++;
      if (mex !== g) throw fail(`position ${p} has Grundy value ${g} in ${values(rows)}, the mex of its children's values is ${mex}`);
    }
    for (const m of moves) {
      if (m.grundy !== null && (m.grundy === 0) !== (m.outcome === "loss")) {
        throw fail(`position ${formatRows(m.position)} has Grundy value ${m.grundy} in ${values(m.position)} but is a ${m.outcome} in ${losses(m.position)}`);
      }
    }
  }

  /** Everything the tables say about a position: the object `chomp query --json`
   * prints (position, tiles, outcome, grundy, grundy_normal, winning_moves, moves). */
  async query(pos) {
    const rows = parsePosition(pos);
    const [n] = this.locate(rows);
    const children = [];
    for (let a = 0; a < rows.length; a++) {
      for (let b = 0; b < rows[a]; b++) {
        if (a === 0 && b === 0) continue;
        const child = [];
        for (let i = 0; i < rows.length; i++) {
          const v = i < a ? rows[i] : Math.min(rows[i], b);
          if (v === 0) break;
          child.push(v);
        }
        children.push({ move: [a, b], position: child });
      }
    }
    const [self, ...values] = await Promise.all([this.value(rows), ...children.map((c) => this.value(c.position))]);
    const moves = children.map((c, i) => ({
      move: c.move,
      position: c.position,
      outcome: values[i].loss ? "loss" : "win",
      grundy: values[i].g,
    }));
    this.checkRules(rows, self.loss, self.g, moves);
    const tiles = moves.map((m) => sum(m.position));
    const order = moves.map((_, i) => i);
    order.sort((x, y) => {
      const a = moves[x];
      const b = moves[y];
      return (a.outcome === "loss" ? 0 : 1) - (b.outcome === "loss" ? 0 : 1) || tiles[y] - tiles[x] || a.move[0] - b.move[0] || a.move[1] - b.move[1];
    });
    const sorted = order.map((i) => moves[i]);
    const winning = moves.filter((m) => m.outcome === "loss").map((m) => [m.move[0], m.move[1]]);
    return {
      position: rows,
      tiles: n,
      outcome: self.loss ? "loss" : "win",
      grundy: self.g,
      grundy_normal: self.g === null ? null : self.g + 1,
      winning_moves: winning,
      moves: sorted,
    };
  }
}

// ------------------------------------------------------------------ src/sources.js

// Where the bytes come from: a local directory (Node), files in memory or
// picked by the user (a Map, a directory handle); the helpers every source
// shares. A web server: http.js; a packed site: pack.js.

const isNode = typeof process !== "undefined" && process.versions != null && process.versions.node != null;

const ERRNO = {
  ENOENT: "No such file or directory",
  EACCES: "Permission denied",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  EPERM: "Operation not permitted",
};

/** An exception's message, with its cause (Node's fetch says only "fetch failed"). */
function why(e) {
  let s = (e && e.message) || String(e);
  if (e && e.cause && e.cause.message) s += ` (${e.cause.message})`;
  return s;
}

function notFound(message) {
  const e = new TableError(message);
  e.notFound = true;
  return e;
}

/** At most `n` tasks at once; the others wait their turn, first come first served. */
class Slots {
  constructor(n) {
    this.free = n;
    this.waiting = [];
  }

  async run(task) {
    if (this.free > 0) this.free--;
    else await new Promise((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

let fsPromise = null;

function nodeFs() {
  if (!fsPromise) fsPromise = import("node:fs/promises");
  return fsPromise;
}

/** A local directory, read with positioned reads (Node). */
class NodeDirSource {
  constructor(dir, stats) {
    this.dir = dir;
    this.label = dir;
    this.stats = stats;
    this.slots = new Slots(32); // open files at once
  }

  path(rel) {
    return /[\\/]$/.test(this.dir) ? this.dir + rel : `${this.dir}/${rel}`;
  }

  fail(rel, e) {
    const why = (e && ERRNO[e.code]) || (e && e.message) || String(e);
    const err = new TableError(`${this.path(rel)}: ${why}`);
    if (e && (e.code === "ENOENT" || e.code === "ENOTDIR")) err.notFound = true;
    return err;
  }

  async readAll(rel) {
    const fs = await nodeFs();
    let data;
    try {
      data = await fs.readFile(this.path(rel));
    } catch (e) {
      throw this.fail(rel, e);
    }
    this.stats.requests++;
    this.stats.bytesRead += data.length;
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }

  readRange(rel, offset, length) {
    return this.slots.run(() => this.pread(rel, offset, length));
  }

  async pread(rel, offset, length) {
    const fs = await nodeFs();
    let fh;
    try {
      fh = await fs.open(this.path(rel), "r");
    } catch (e) {
      throw this.fail(rel, e);
    }
    try {
      const total = (await fh.stat()).size;
      const want = Math.max(0, Math.min(length, total - offset));
      const data = new Uint8Array(want);
      let got = 0;
      while (got < want) {
        const { bytesRead } = await fh.read(data, got, want - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      this.stats.requests++;
      this.stats.bytesRead += got;
      return { data: got === want ? data : data.subarray(0, got), total };
    } catch (e) {
      throw this.fail(rel, e);
    } finally {
      await fh.close();
    }
  }

  async describeMissing() {
    const fs = await nodeFs();
    try {
      const st = await fs.stat(this.dir);
      return st.isDirectory() ? "no manifest.json; not a chomp table directory" : "a file, not a table directory";
    } catch {
      return "no such directory (no manifest.json)";
    }
  }
}

/** Files in memory or picked by the user: a Map of relative path -> File, Blob,
 * Uint8Array or ArrayBuffer, or a browser directory handle (File System Access API). */
class BlobSource {
  constructor(lookup, label, stats) {
    this.lookup = lookup;
    this.label = label;
    this.stats = stats;
  }

  path(rel) {
    return this.label ? `${this.label}/${rel}` : rel;
  }

  async file(rel) {
    let f;
    try {
      f = await this.lookup(rel);
    } catch (e) {
      if (e && (e.name === "NotFoundError" || e.name === "TypeMismatchError")) throw notFound(`${this.path(rel)}: No such file or directory`);
      throw new TableError(`${this.path(rel)}: ${(e && e.message) || e}`);
    }
    if (f === undefined || f === null) throw notFound(`${this.path(rel)}: No such file or directory`);
    if (f instanceof ArrayBuffer) return new Uint8Array(f);
    return f;
  }

  async slice(rel, f, start, end) {
    let data;
    if (ArrayBuffer.isView(f)) data = new Uint8Array(f.buffer, f.byteOffset, f.byteLength).subarray(start, end);
    else {
      try {
        data = new Uint8Array(await f.slice(start, end).arrayBuffer());
      } catch (e) {
        throw new TableError(`${this.path(rel)}: ${(e && e.message) || e}`);
      }
    }
    this.stats.requests++;
    this.stats.bytesRead += data.length;
    return data;
  }

  async readAll(rel) {
    const f = await this.file(rel);
    return this.slice(rel, f, 0, ArrayBuffer.isView(f) ? f.byteLength : f.size);
  }

  async readRange(rel, offset, length) {
    const f = await this.file(rel);
    const total = ArrayBuffer.isView(f) ? f.byteLength : f.size;
    return { data: await this.slice(rel, f, offset, offset + length), total };
  }

  async describeMissing() {
    return "no manifest.json; not a chomp table directory";
  }
}

function dirHandleLookup(handle) {
  const files = new Map();
  return (rel) => {
    let p = files.get(rel);
    if (!p) {
      p = (async () => {
        const parts = rel.split("/");
        let dir = handle;
        for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
        return (await dir.getFileHandle(parts[parts.length - 1])).getFile();
      })();
      files.set(rel, p);
      p.catch(() => files.delete(rel));
    }
    return p;
  };
}

// ------------------------------------------------------------------ src/http.js

// A table directory on a web server, read with HTTP Range requests, and the
// answers to them: one range (Content-Range) or several (multipart/byteranges,
// which a packed site asks for: pack.js).

/** A Content-Range value `bytes FIRST-LAST/TOTAL` (TOTAL may be `*`, then null); null if it is not one. */
function contentRange(value) {
  const m = value === null ? null : /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value.trim());
  return m && { first: Number(m[1]), last: Number(m[2]), total: m[3] === "*" ? null : Number(m[3]) };
}

/** The one part of a 206 answer to a range request: its span and bytes. */
function singlePart(url, res, body) {
  const cr = res.headers.get("content-range");
  const span = contentRange(cr);
  if (!span || span.last - span.first + 1 !== body.length) {
    throw new TableError(`${url}: a range answered with Content-Range ${JSON.stringify(cr)} and ${body.length} bytes`);
  }
  return { first: span.first, last: span.last, data: body };
}

/** The parts of a multipart/byteranges body (RFC 9110, section 14.6), read by their Content-Range lengths. */
function multipartParts(url, type, body) {
  const bm = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  if (!bm) throw new TableError(`${url}: multipart answer without a boundary`);
  const dash = new TextEncoder().encode(`--${bm[1] || bm[2]}`);
  const bad = (what) => new TableError(`${url}: malformed multipart/byteranges answer: ${what}`);
  const at = (i, bytes) => bytes.every((b, k) => body[i + k] === b);
  const text = new TextDecoder();
  const parts = [];
  let i = 0;
  for (;;) {
    // Skip the line ends before a delimiter.
    while (body[i] === 13 || body[i] === 10) i++;
    if (!at(i, dash)) throw bad("no boundary where a part should start");
    i += dash.length;
    if (body[i] === 45 && body[i + 1] === 45) return parts; // the closing delimiter
    // The part's header lines, up to an empty line.
    let first = -1;
    let last = -1;
    for (;;) {
      let end = i;
      while (end < body.length && body[end] !== 10) end++;
      if (end >= body.length) throw bad("a part's headers do not end");
      const line = text.decode(body.subarray(i, end)).replace(/\r$/, "");
      i = end + 1;
      if (line === "" && first >= 0) break;
      const header = /^content-range:(.*)$/i.exec(line);
      const span = header && contentRange(header[1]);
      if (span) ({ first, last } = span);
    }
    const len = last - first + 1;
    if (!(len > 0) || i + len > body.length) throw bad("a part shorter than its Content-Range");
    parts.push({ first, last, data: body.subarray(i, i + len) });
    i += len;
  }
}

/** A table directory on a web server (any static host), read with HTTP Range requests. */
class HttpSource {
  constructor(url, fetchFn, stats, concurrency) {
    this.base = url.endsWith("/") ? url : url + "/";
    this.label = url;
    this.fetch = fetchFn;
    this.stats = stats;
    // Requests in flight at once (a question at 150 tiles looks up 149 levels):
    // the rest wait their turn, as a browser queues them per host.
    this.slots = new Slots(concurrency);
  }

  path(rel) {
    return new URL(rel, this.base).href;
  }

  /** `fetch`, then `use(response)`, holding one of the slots throughout. */
  async request(rel, headers, use) {
    const url = this.path(rel);
    return this.slots.run(async () => {
      let res;
      try {
        res = await this.fetch(url, headers ? { headers } : undefined);
      } catch (e) {
        throw new TableError(`${url}: ${why(e)}`);
      }
      this.stats.requests++;
      return use(res);
    });
  }

  async body(rel, res) {
    let buf;
    try {
      buf = new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      throw new TableError(`${this.path(rel)}: ${why(e)}`);
    }
    this.stats.bytesRead += buf.length;
    return buf;
  }

  status(rel, res) {
    const why = `HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}`;
    return res.status === 404 || res.status === 410 ? notFound(`${this.path(rel)}: ${why}`) : new TableError(`${this.path(rel)}: ${why}`);
  }

  async readAll(rel) {
    return this.request(rel, null, async (res) => {
      if (res.status !== 200) {
        if (res.body && res.body.cancel) res.body.cancel().catch(() => {});
        throw this.status(rel, res);
      }
      return this.body(rel, res);
    });
  }

  async readRange(rel, offset, length) {
    if (length === 0) return { data: new Uint8Array(0), total: null };
    const last = offset + length - 1;
    return this.request(rel, { Range: `bytes=${offset}-${last}` }, (res) => this.ranged(rel, offset, length, res));
  }

  async ranged(rel, offset, length, res) {
    const last = offset + length - 1;
    if (res.status === 206) {
      const cr = res.headers.get("content-range");
      let total = null;
      if (cr !== null) {
        // Readable on the same origin, or where the server exposes it (CORS).
        const span = contentRange(cr);
        if (!span || span.first !== offset || span.last > last) {
          throw new TableError(`${this.path(rel)}: the server answered bytes ${offset}-${last} with Content-Range ${JSON.stringify(cr)}`);
        }
        total = span.total;
      }
      const data = await this.body(rel, res);
      if (data.length > length) throw new TableError(`${this.path(rel)}: the server answered ${length} bytes at ${offset} with ${data.length}`);
      return { data, total };
    }
    if (res.status === 200) {
      // A server that ignores Range sends the whole file: take the bytes asked for.
      const data = await this.body(rel, res);
      return { data: data.subarray(offset, offset + length), total: data.length };
    }
    if (res.status === 416) {
      const cr = res.headers.get("content-range");
      const m = cr && /\/(\d+)$/.exec(cr.trim());
      if (res.body && res.body.cancel) res.body.cancel().catch(() => {});
      return { data: new Uint8Array(0), total: m ? Number(m[1]) : null };
    }
    if (res.body && res.body.cancel) res.body.cancel().catch(() => {});
    throw this.status(rel, res);
  }

  async describeMissing() {
    return "no manifest.json; not a chomp table directory";
  }
}

// ------------------------------------------------------------------ src/pack.js

// A packed site (`chomp site --pack`): the table files in one file,
// tables.pack, at the offsets its index (site.json's `pack`) gives; the reads
// a question issues together asked in one request of several ranges, and a
// host that ignores Range (a 200 with the whole pack) answered from the pack
// read whole once and kept.

/** Most ranges asked in one request of a pack (a header line of about 2 KB). */
export const PACK_RANGES = 96;

/**
 * A site's tables packed into one file (`chomp site --pack`): each table
 * file's bytes lie at an offset of the pack (`index`: name → [offset,
 * bytes]). The reads issued together (a question's heads, then its pages,
 * then its blocks) go out as one request of several ranges, which the
 * server answers with multipart/byteranges (nginx, Apache); a server that
 * answers otherwise gets one range a request from then on, and one that
 * ignores Range (a 200 with the whole pack, as `python3 -m http.server`
 * answers) has its pack read whole once and kept. Files not in the pack
 * (manifest.json) are read from the directory as before. What is read is
 * checked exactly as from the table files themselves.
 */
class PackSource {
  constructor(http, packRel, index) {
    this.http = http;
    this.label = http.label;
    this.stats = http.stats;
    this.packRel = packRel;
    this.index = index;
    this.queue = [];
    this.flushing = false;
    this.multi = true;
    // The whole pack (a promise of its bytes), once a server has answered a
    // single range with all of it: a server that ignores Range.
    this.whole = null;
  }

  path(rel) {
    return this.http.path(rel);
  }

  describeMissing() {
    return this.http.describeMissing();
  }

  async readAll(rel) {
    const at = this.index.get(rel);
    if (!at) return this.http.readAll(rel);
    return (await this.readRange(rel, 0, at[1])).data;
  }

  readRange(rel, offset, length) {
    const at = this.index.get(rel);
    if (!at) return this.http.readRange(rel, offset, length);
    if (length === 0) return Promise.resolve({ data: new Uint8Array(0), total: at[1] });
    if (offset + length > at[1]) {
      // Past the file's end: the bytes there (none, or part) and its size, as a server answers.
      const have = Math.max(0, at[1] - offset);
      if (have === 0) return Promise.resolve({ data: new Uint8Array(0), total: at[1] });
      return this.readRange(rel, offset, have);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ rel, start: at[0] + offset, length, total: at[1], resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // A macrotask later: every read the same wave of the question issues has joined.
        setTimeout(() => this.flush(), 0);
      }
    });
  }

  flush() {
    this.flushing = false;
    const all = this.queue.splice(0);
    if (this.whole) {
      this.fromWhole(all);
      return;
    }
    all.sort((a, b) => a.start - b.start || a.length - b.length);
    const per = this.multi ? PACK_RANGES : 1;
    for (let i = 0; i < all.length; i += per) {
      const batch = all.slice(i, i + per);
      this.fetchBatch(batch).catch((e) => batch.forEach((r) => r.reject(e)));
    }
  }

  async fetchBatch(batch) {
    const spans = batch.map((r) => `${r.start}-${r.start + r.length - 1}`);
    const rel = this.packRel;
    const url = this.http.path(rel);
    if (this.whole) {
      this.fromWhole(batch);
      return;
    }
    const missed = await this.http.request(rel, { Range: `bytes=${[...new Set(spans)].join(",")}` }, async (res) => {
      if (res.status === 200 && (batch.length === 1 || this.whole)) {
        // One range answered with the whole pack: Range is ignored. Read it once, keep it.
        if (this.whole) {
          if (res.body && res.body.cancel) res.body.cancel().catch(() => {});
        } else {
          this.whole = this.http.body(rel, res);
          this.whole.catch(() => (this.whole = null));
        }
        return batch;
      }
      if (res.status !== 206) {
        if (res.body && res.body.cancel) res.body.cancel().catch(() => {});
        if (res.status === 200) return batch; // several ranges answered whole: ask one at a time
        throw this.http.status(rel, res);
      }
      const body = await this.http.body(rel, res);
      const type = res.headers.get("content-type") || "";
      const parts = /^multipart\/byteranges/i.test(type) ? multipartParts(url, type, body) : [singlePart(url, res, body)];
      const left = [];
      for (const r of batch) {
        const part = parts.find((p) => p.first <= r.start && r.start + r.length - 1 <= p.last);
        if (part) r.resolve({ data: part.data.subarray(r.start - part.first, r.start - part.first + r.length), total: r.total });
        else left.push(r);
      }
      return left;
    });
    if (this.whole && missed.length > 0) {
      await this.fromWhole(missed);
      return;
    }
    if (missed.length > 0) {
      if (missed.length === batch.length && batch.length === 1) throw new TableError(`${url}: the server did not answer the range asked for`);
      // The server answers one range a request (or some of them): so be it.
      this.multi = false;
      for (const r of missed) this.fetchBatch([r]).catch((e) => r.reject(e));
    }
  }

  /** Answers `reads` from the whole pack once it has arrived (a read past its end is an error). */
  async fromWhole(reads) {
    let whole;
    try {
      whole = await this.whole;
    } catch (e) {
      reads.forEach((r) => r.reject(e));
      return;
    }
    for (const r of reads) {
      if (r.start + r.length > whole.length) {
        const at = `bytes ${r.start}-${r.start + r.length - 1}`;
        r.reject(new TableError(`${this.http.path(this.packRel)}: ${whole.length} bytes, too short for ${r.rel} (${at})`));
      } else {
        r.resolve({ data: whole.subarray(r.start, r.start + r.length), total: r.total });
      }
    }
  }
}

/**
 * The source of a packed site: `pack` is site.json's entry ({file, files:
 * {name: [offset, bytes]}}), checked and made the index; `src` the directory's
 * source, which must be a web server's.
 */
function packSource(src, pack) {
  if (!(src instanceof HttpSource) || !pack || typeof pack.file !== "string" || !pack.files || typeof pack.files !== "object") {
    throw new ChompTablesError("openTables: pack is {file, files: {name: [offset, bytes]}} (site.json's) and needs a URL");
  }
  const index = new Map();
  for (const [rel, at] of Object.entries(pack.files)) {
    if (!Array.isArray(at) || at.length !== 2 || !at.every((v) => Number.isSafeInteger(v) && v >= 0)) {
      throw new ChompTablesError(`openTables: pack.files[${JSON.stringify(rel)}] is not [offset, bytes]`);
    }
    index.set(rel, at);
  }
  return new PackSource(src, pack.file, index);
}

// ------------------------------------------------------------------ src/open.js

// openTables: a source chosen from what it is given, the manifest read, pinned
// (manifestSha256, against) and checked.

/** The default bound of the cache of decoded pages, blocks and tables: 64 MiB. */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/** Requests to a web server in flight at once, by default. */
export const DEFAULT_CONCURRENCY = 8;

function makeSource(source, options, stats) {
  const src = makeDirSource(source, options, stats);
  return options.pack === undefined ? src : packSource(src, options.pack);
}

function makeDirSource(source, options, stats) {
  const fetchFn = options.fetch || (globalThis.fetch && globalThis.fetch.bind(globalThis));
  const http = (url) => {
    if (!fetchFn) throw new ChompTablesError("no fetch function: pass options.fetch");
    return new HttpSource(url, fetchFn, stats, options.concurrency === undefined ? DEFAULT_CONCURRENCY : options.concurrency);
  };
  if (typeof source === "string") {
    if (/^https?:\/\//i.test(source)) return http(source);
    if (/^file:\/\//i.test(source) && isNode) return new NodeDirSource(decodeURIComponent(new URL(source).pathname), stats);
    if (isNode) return new NodeDirSource(source, stats);
    // In a browser, a relative or absolute URL of the page's own site.
    return http(new URL(source, globalThis.location ? globalThis.location.href : undefined).href);
  }
  if (typeof URL !== "undefined" && source instanceof URL) {
    if (source.protocol === "file:" && isNode) return new NodeDirSource(decodeURIComponent(source.pathname), stats);
    return http(source.href);
  }
  if (source instanceof Map) {
    const label = typeof options.label === "string" ? options.label : "";
    return new BlobSource((rel) => source.get(rel), label, stats);
  }
  if (source && typeof source.getFileHandle === "function" && typeof source.getDirectoryHandle === "function") {
    return new BlobSource(dirHandleLookup(source), typeof options.label === "string" ? options.label : source.name || "", stats);
  }
  throw new ChompTablesError("openTables: give a URL, a directory path (Node), a Map of relative paths to Files/Blobs or a directory handle");
}

/**
 * Opens a table directory: reads and checks its manifest.json; tables are read
 * when a query needs them.
 *
 * @param source an http(s) URL of the directory (in a browser also a URL of
 *   the page's site), a directory path (Node), a Map of relative path -> File,
 *   Blob or Uint8Array, or a browser directory handle.
 * @param options `cacheBytes` (bound of the cache of decoded pages, blocks and
 *   tables, default 64 MiB), `fetch` (a fetch function for URLs),
 *   `concurrency` (HTTP requests in flight, default 8), `label` (the name of
 *   a Map or handle in messages), `manifestSha256` (the SHA-256 the manifest
 *   must have), `against` (the published manifest itself, as bytes or text:
 *   manifest.json must equal it byte for byte).
 */
export async function openTables(source, options = {}) {
  const cacheBytes = options.cacheBytes === undefined ? DEFAULT_CACHE_BYTES : options.cacheBytes;
  if (typeof cacheBytes !== "number" || !(cacheBytes >= 0)) throw new ChompTablesError("openTables: cacheBytes must be a number of bytes, 0 or more");
  if (options.concurrency !== undefined && !(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
    throw new ChompTablesError("openTables: concurrency must be a whole number of requests, 1 or more");
  }
  const stats = { bytesRead: 0, requests: 0 };
  const src = makeSource(source, options, stats);
  const path = src.path("manifest.json");
  let raw;
  try {
    raw = await src.readAll("manifest.json");
  } catch (e) {
    if (e instanceof TableError && e.notFound) throw new TableError(`${src.label}: ${await src.describeMissing()}`);
    throw e;
  }
  // A manifest pinned by its SHA-256 (a site's site.json, a release note):
  // the chain of checks then starts from that digest, not from the host.
  if (options.manifestSha256 !== undefined) {
    if (typeof options.manifestSha256 !== "string" || !/^[0-9a-f]{64}$/.test(options.manifestSha256)) {
      throw new ChompTablesError("openTables: manifestSha256 must be 64 lowercase hex digits");
    }
    if ((await sha256Hex(raw)) !== options.manifestSha256) {
      throw new TableError(`${path}: SHA-256 differs from the one expected (manifestSha256): not the tables asked for`);
    }
  }
  // Pinned to the published manifest itself (e.g. results/…-manifest.json):
  // a copy damaged in any way, checksums recomputed or not, is refused whole.
  if (options.against !== undefined) {
    const a = options.against;
    const want = typeof a === "string" ? new TextEncoder().encode(a) : a instanceof ArrayBuffer ? new Uint8Array(a) : a;
    if (!(want instanceof Uint8Array)) throw new ChompTablesError("openTables: against must be the published manifest's bytes (Uint8Array, ArrayBuffer) or text");
    if (want.length !== raw.length || want.some((b, i) => b !== raw[i])) {
      throw new TableError(`${path}: differs from the published manifest (against): these are not the published tables (refused whole)`);
    }
  }
  const manifest = await parseManifest(raw, path);
  return new Tables(src, manifest, { cacheBytes });
}

// ------------------------------------------------------------------ src/index.js

// The API: what this module exports, chomp-tables.js exports (and nothing
// else); chomp-tables.d.ts gives its types.

/** Internals, exported for the package's own tests only: not part of the API. */
export const __testing = { xxh64, zstdOneFrame, zstdFrameInfo, parseJson, canonicalJson, SerializedRoaring, ByteLru };
