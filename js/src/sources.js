// Where the bytes come from: a local directory (Node), files in memory or
// picked by the user (a Map, a directory handle); the helpers every source
// shares. A web server: http.js; a packed site: pack.js.

import { TableError } from "./errors.js";

export const isNode = typeof process !== "undefined" && process.versions != null && process.versions.node != null;

const ERRNO = {
  ENOENT: "No such file or directory",
  EACCES: "Permission denied",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  EPERM: "Operation not permitted",
};

/** An exception's message, with its cause (Node's fetch says only "fetch failed"). */
export function why(e) {
  let s = (e && e.message) || String(e);
  if (e && e.cause && e.cause.message) s += ` (${e.cause.message})`;
  return s;
}

export function notFound(message) {
  const e = new TableError(message);
  e.notFound = true;
  return e;
}

/** At most `n` tasks at once; the others wait their turn, first come first served. */
export class Slots {
  constructor(n) {
    this.free = n;
    this.waiting = [];
  }

  async run(task) {
    if (this.free > 0) this.free--;
    else await new Promise((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

let fsPromise = null;

function nodeFs() {
  if (!fsPromise) fsPromise = import("node:fs/promises");
  return fsPromise;
}

/** A local directory, read with positioned reads (Node). */
export class NodeDirSource {
  constructor(dir, stats) {
    this.dir = dir;
    this.label = dir;
    this.stats = stats;
    this.slots = new Slots(32); // open files at once
  }

  path(rel) {
    return /[\\/]$/.test(this.dir) ? this.dir + rel : `${this.dir}/${rel}`;
  }

  fail(rel, e) {
    const why = (e && ERRNO[e.code]) || (e && e.message) || String(e);
    const err = new TableError(`${this.path(rel)}: ${why}`);
    if (e && (e.code === "ENOENT" || e.code === "ENOTDIR")) err.notFound = true;
    return err;
  }

  async readAll(rel) {
    const fs = await nodeFs();
    let data;
    try {
      data = await fs.readFile(this.path(rel));
    } catch (e) {
      throw this.fail(rel, e);
    }
    this.stats.requests++;
    this.stats.bytesRead += data.length;
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }

  readRange(rel, offset, length) {
    return this.slots.run(() => this.pread(rel, offset, length));
  }

  async pread(rel, offset, length) {
    const fs = await nodeFs();
    let fh;
    try {
      fh = await fs.open(this.path(rel), "r");
    } catch (e) {
      throw this.fail(rel, e);
    }
    try {
      const total = (await fh.stat()).size;
      const want = Math.max(0, Math.min(length, total - offset));
      const data = new Uint8Array(want);
      let got = 0;
      while (got < want) {
        const { bytesRead } = await fh.read(data, got, want - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      this.stats.requests++;
      this.stats.bytesRead += got;
      return { data: got === want ? data : data.subarray(0, got), total };
    } catch (e) {
      throw this.fail(rel, e);
    } finally {
      await fh.close();
    }
  }

  async describeMissing() {
    const fs = await nodeFs();
    try {
      const st = await fs.stat(this.dir);
      return st.isDirectory() ? "no manifest.json; not a chomp table directory" : "a file, not a table directory";
    } catch {
      return "no such directory (no manifest.json)";
    }
  }
}

/** Files in memory or picked by the user: a Map of relative path -> File, Blob,
 * Uint8Array or ArrayBuffer, or a browser directory handle (File System Access API). */
export class BlobSource {
  constructor(lookup, label, stats) {
    this.lookup = lookup;
    this.label = label;
    this.stats = stats;
  }

  path(rel) {
    return this.label ? `${this.label}/${rel}` : rel;
  }

  async file(rel) {
    let f;
    try {
      f = await this.lookup(rel);
    } catch (e) {
      if (e && (e.name === "NotFoundError" || e.name === "TypeMismatchError")) throw notFound(`${this.path(rel)}: No such file or directory`);
      throw new TableError(`${this.path(rel)}: ${(e && e.message) || e}`);
    }
    if (f === undefined || f === null) throw notFound(`${this.path(rel)}: No such file or directory`);
    if (f instanceof ArrayBuffer) return new Uint8Array(f);
    return f;
  }

  async slice(rel, f, start, end) {
    let data;
    if (ArrayBuffer.isView(f)) data = new Uint8Array(f.buffer, f.byteOffset, f.byteLength).subarray(start, end);
    else {
      try {
        data = new Uint8Array(await f.slice(start, end).arrayBuffer());
      } catch (e) {
        throw new TableError(`${this.path(rel)}: ${(e && e.message) || e}`);
      }
    }
    this.stats.requests++;
    this.stats.bytesRead += data.length;
    return data;
  }

  async readAll(rel) {
    const f = await this.file(rel);
    return this.slice(rel, f, 0, ArrayBuffer.isView(f) ? f.byteLength : f.size);
  }

  async readRange(rel, offset, length) {
    const f = await this.file(rel);
    const total = ArrayBuffer.isView(f) ? f.byteLength : f.size;
    return { data: await this.slice(rel, f, offset, offset + length), total };
  }

  async describeMissing() {
    return "no manifest.json; not a chomp table directory";
  }
}

export function dirHandleLookup(handle) {
  const files = new Map();
  return (rel) => {
    let p = files.get(rel);
    if (!p) {
      p = (async () => {
        const parts = rel.split("/");
        let dir = handle;
        for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
        return (await dir.getFileHandle(parts[parts.length - 1])).getFile();
      })();
      files.set(rel, p);
      p.catch(() => files.delete(rel));
    }
    return p;
  };
}
