// zstd: each compressed payload or block is exactly one zstd data frame, walked
// and bounded before `fzstd` (vendored in vendor/) decodes it; XXH64 for the
// frame checksums a writer may add.

import { Decompress } from "../vendor/fzstd.js";
import { corrupt } from "./errors.js";
import { view } from "./bytes.js";

const ZSTD_MAX_WINDOW = 1 << 27; // libzstd's default limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT)
const ZSTD_BLOCK_MAX = 1 << 17;
const TOO_LARGE = Symbol("too large");

/** Walks a zstd frame's header and block headers without decoding: checks that
 * `data` is exactly one data frame (RFC 8878) and returns what its header says. */
export function zstdFrameInfo(data, path, what) {
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
export function xxh64(bytes) {
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
export function zstdOneFrame(data, limit, path, what) {
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
