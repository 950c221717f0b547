// openTables: a source chosen from what it is given, the manifest read, pinned
// (manifestSha256, against) and checked.

import { ChompTablesError, TableError } from "./errors.js";
import { sha256Hex } from "./bytes.js";
import { parseManifest } from "./manifest.js";
import { BlobSource, NodeDirSource, dirHandleLookup, isNode } from "./sources.js";
import { HttpSource } from "./http.js";
import { packSource } from "./pack.js";
import { Tables } from "./tables.js";

/** The default bound of the cache of decoded pages, blocks and tables: 64 MiB. */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/** Requests to a web server in flight at once, by default. */
export const DEFAULT_CONCURRENCY = 8;

function makeSource(source, options, stats) {
  const src = makeDirSource(source, options, stats);
  return options.pack === undefined ? src : packSource(src, options.pack);
}

function makeDirSource(source, options, stats) {
  const fetchFn = options.fetch || (globalThis.fetch && globalThis.fetch.bind(globalThis));
  const http = (url) => {
    if (!fetchFn) throw new ChompTablesError("no fetch function: pass options.fetch");
    return new HttpSource(url, fetchFn, stats, options.concurrency === undefined ? DEFAULT_CONCURRENCY : options.concurrency);
  };
  if (typeof source === "string") {
    if (/^https?:\/\//i.test(source)) return http(source);
    if (/^file:\/\//i.test(source) && isNode) return new NodeDirSource(decodeURIComponent(new URL(source).pathname), stats);
    if (isNode) return new NodeDirSource(source, stats);
    // In a browser, a relative or absolute URL of the page's own site.
    return http(new URL(source, globalThis.location ? globalThis.location.href : undefined).href);
  }
  if (typeof URL !== "undefined" && source instanceof URL) {
    if (source.protocol === "file:" && isNode) return new NodeDirSource(decodeURIComponent(source.pathname), stats);
    return http(source.href);
  }
  if (source instanceof Map) {
    const label = typeof options.label === "string" ? options.label : "";
    return new BlobSource((rel) => source.get(rel), label, stats);
  }
  if (source && typeof source.getFileHandle === "function" && typeof source.getDirectoryHandle === "function") {
    return new BlobSource(dirHandleLookup(source), typeof options.label === "string" ? options.label : source.name || "", stats);
  }
  throw new ChompTablesError("openTables: give a URL, a directory path (Node), a Map of relative paths to Files/Blobs or a directory handle");
}

/**
 * Opens a table directory: reads and checks its manifest.json; tables are read
 * when a query needs them.
 *
 * @param source an http(s) URL of the directory (in a browser also a URL of
 *   the page's site), a directory path (Node), a Map of relative path -> File,
 *   Blob or Uint8Array, or a browser directory handle.
 * @param options `cacheBytes` (bound of the cache of decoded pages, blocks and
 *   tables, default 64 MiB), `fetch` (a fetch function for URLs),
 *   `concurrency` (HTTP requests in flight, default 8), `label` (the name of
 *   a Map or handle in messages), `manifestSha256` (the SHA-256 the manifest
 *   must have), `against` (the published manifest itself, as bytes or text:
 *   manifest.json must equal it byte for byte).
 */
export async function openTables(source, options = {}) {
  const cacheBytes = options.cacheBytes === undefined ? DEFAULT_CACHE_BYTES : options.cacheBytes;
  if (typeof cacheBytes !== "number" || !(cacheBytes >= 0)) throw new ChompTablesError("openTables: cacheBytes must be a number of bytes, 0 or more");
  if (options.concurrency !== undefined && !(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
    throw new ChompTablesError("openTables: concurrency must be a whole number of requests, 1 or more");
  }
  const stats = { bytesRead: 0, requests: 0 };
  const src = makeSource(source, options, stats);
  const path = src.path("manifest.json");
  let raw;
  try {
    raw = await src.readAll("manifest.json");
  } catch (e) {
    if (e instanceof TableError && e.notFound) throw new TableError(`${src.label}: ${await src.describeMissing()}`);
    throw e;
  }
  // A manifest pinned by its SHA-256 (a site's site.json, a release note):
  // the chain of checks then starts from that digest, not from the host.
  if (options.manifestSha256 !== undefined) {
    if (typeof options.manifestSha256 !== "string" || !/^[0-9a-f]{64}$/.test(options.manifestSha256)) {
      throw new ChompTablesError("openTables: manifestSha256 must be 64 lowercase hex digits");
    }
    if ((await sha256Hex(raw)) !== options.manifestSha256) {
      throw new TableError(`${path}: SHA-256 differs from the one expected (manifestSha256): not the tables asked for`);
    }
  }
  // Pinned to the published manifest itself (e.g. results/…-manifest.json):
  // a copy damaged in any way, checksums recomputed or not, is refused whole.
  if (options.against !== undefined) {
    const a = options.against;
    const want = typeof a === "string" ? new TextEncoder().encode(a) : a instanceof ArrayBuffer ? new Uint8Array(a) : a;
    if (!(want instanceof Uint8Array)) throw new ChompTablesError("openTables: against must be the published manifest's bytes (Uint8Array, ArrayBuffer) or text");
    if (want.length !== raw.length || want.some((b, i) => b !== raw[i])) {
      throw new TableError(`${path}: differs from the published manifest (against): these are not the published tables (refused whole)`);
    }
  }
  const manifest = await parseManifest(raw, path);
  return new Tables(src, manifest, { cacheBytes });
}
