// A packed site (`chomp site --pack`): the table files in one file,
// tables.pack, at the offsets its index (site.json's `pack`) gives; the reads
// a question issues together asked in one request of several ranges, and a
// host that ignores Range (a 200 with the whole pack) answered from the pack
// read whole once and kept.

import { ChompTablesError, TableError } from "./errors.js";
import { HttpSource, multipartParts, singlePart } from "./http.js";

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
export function packSource(src, pack) {
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
