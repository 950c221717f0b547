// A table directory on a web server, read with HTTP Range requests (answers of
// one range or multipart/byteranges), and a packed site (`chomp site --pack`):
// the table files in one file, several ranges in one request.

import { TableError } from "./errors.js";
import { Slots, notFound, why } from "./sources.js";

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
export class HttpSource {
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
export class PackSource {
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
