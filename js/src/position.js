// Positions as the CLI reads them (FORMAT.md section 9), its error messages word
// for word, and the transpose.

import { InvalidPosition } from "./errors.js";
import { U32_MAX } from "./bytes.js";

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

export const formatRows = (rows) => rows.join(" ");
export const sum = (rows) => rows.reduce((a, b) => a + b, 0);
export const plural = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;
