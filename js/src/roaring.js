// Roaring bitmaps read in place from their portable serialization (FORMAT.md
// section 6): the loss sets of formats 1 and 2.

import { corrupt } from "./errors.js";
import { view } from "./bytes.js";

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
export class SerializedRoaring {
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
