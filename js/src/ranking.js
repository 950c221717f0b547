// The ranking of positions within a level (FORMAT.md section 8).

import { sum } from "./position.js";

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
