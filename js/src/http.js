// A table directory on a web server, read with HTTP Range requests, and the
// answers to them: one range (Content-Range) or several (multipart/byteranges,
// which a packed site asks for: pack.js).

import { TableError } from "./errors.js";
import { Slots, notFound, why } from "./sources.js";

/** A Content-Range value `bytes FIRST-LAST/TOTAL` (TOTAL may be `*`, then null); null if it is not one. */
function contentRange(value) {
  const m = value === null ? null : /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value.trim());
  return m && { first: Number(m[1]), last: Number(m[2]), total: m[3] === "*" ? null : Number(m[3]) };
}

/** The one part of a 206 answer to a range request: its span and bytes. */
export function singlePart(url, res, body) {
  const cr = res.headers.get("content-range");
  const span = contentRange(cr);
  if (!span || span.last - span.first + 1 !== body.length) {
    throw new TableError(`${url}: a range answered with Content-Range ${JSON.stringify(cr)} and ${body.length} bytes`);
  }
  return { first: span.first, last: span.last, data: body };
}

/** The parts of a multipart/byteranges body (RFC 9110, section 14.6), read by their Content-Range lengths. */
export function multipartParts(url, type, body) {
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
