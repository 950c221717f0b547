// manifest.json: parsed and checked before any table is read (FORMAT.md
// sections 3, 10, 14 and 17), and the universe it describes.

import { corrupt } from "./errors.js";
import { TWO32, equalBytes, sha256Hex } from "./bytes.js";
import { plural } from "./position.js";
import { JsonProblem, canonicalJson, keysOf, parseJson } from "./json.js";

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

export const isLevelSharded = (m) => m.format_version === 2 || (m.format_version === 3 && "shard_positions" in m);

export async function parseManifest(raw, path) {
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

export function universeTop(u) {
  let top = u.tiles !== null ? u.tiles : Infinity;
  if (u.rows !== null && u.cols !== null) top = Math.min(top, u.rows * u.cols);
  return top;
}

export function universeBounds(u) {
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
