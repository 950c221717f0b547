// Table files of formats 1 and 2, read whole and checked (FORMAT.md sections 5,
// 7 and 14): the header, the loss set, Grundy values by block.

import { corrupt } from "./errors.js";
import { TWO32, U32_MAX, crc32, equalBytes, u64, view } from "./bytes.js";
import { zstdOneFrame } from "./zstd.js";
import { SerializedRoaring } from "./roaring.js";

export const MAGIC = [0x43, 0x48, 0x4f, 0x4d, 0x50, 0x54, 0x42, 0x4c]; // "CHOMPTBL"
export const KIND_LOSSES = 1;
export const KIND_GRUNDY = 2;
export const KIND_NAMES = { 1: "losses", 2: "grundy" };
export const KIND_WORDS = { 1: "loss", 2: "Grundy" };

export function parseTable(path, data, expectKind) {
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
export class LossTable {
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
export class GrundyTable {
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
