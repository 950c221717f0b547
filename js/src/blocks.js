// Format 3 (FORMAT.md section 17): a table's checked head, its index pages
// and its blocks, each checked against its digest along the chain
// manifest -> head SHA-256 -> index page digest -> block digest.

import { corrupt } from "./errors.js";
import { TWO32, crc32, equalBytes, sha256, u64, view } from "./bytes.js";
import { zstdOneFrame } from "./zstd.js";
import { KIND_NAMES, MAGIC } from "./whole.js";

const FIXED_LEN = 88;
const DIGEST_LEN = 16;
const ENTRY_LEN = 32;

/** The checked head of a format 3 table: header fields and page digests. */
export class Head {
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
