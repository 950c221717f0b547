// chomp-tables: read a chomp-tables directory (FORMAT.md, formats 1, 2 and 3)
// in the browser and in Node, with every check FORMAT.md asks of a reader.
//
//   import { openTables } from "chomp-tables";
//   const t = await openTables("https://example.org/tables/box-8x15/");
//   const answer = await t.query("5 3 1");   // what `chomp query --json` prints
//
// A port of the Python reader (python/src/chomp_tables): same structure, same
// checks, the same messages where the formats allow. Format 3 tables are read
// a block at a time along the chain of checks of FORMAT.md section 17
// (manifest -> head SHA-256 -> index page digest -> block digest); formats 1
// and 2 a whole table at a time, checked against its SHA-256. zstd is decoded
// by `fzstd` (pure JS), vendored in vendor/ and imported by relative path: the
// module works however it is installed (a folder, a tarball, copied files) and
// in a page without an import map. Node's file system module is imported
// lazily, only to read a local directory.

export { ChompTablesError, TableError, QuestionError, InvalidPosition, NotInTables } from "./errors.js";
export { crc32 } from "./bytes.js";
export { parsePosition, conjugate } from "./position.js";
export { Ranking } from "./ranking.js";
export { SMALL_TABLE_BYTES, Tables } from "./tables.js";
export { PACK_RANGES } from "./pack.js";
export { DEFAULT_CACHE_BYTES, DEFAULT_CONCURRENCY, openTables } from "./open.js";
import { xxh64, zstdOneFrame, zstdFrameInfo } from "./zstd.js";
import { parseJson, canonicalJson } from "./json.js";
import { SerializedRoaring } from "./roaring.js";
import { ByteLru } from "./cache.js";

// The API: what this module exports, chomp-tables.js exports (and nothing
// else); chomp-tables.d.ts gives its types.

/** Internals, exported for the package's own tests only: not part of the API. */
export const __testing = { xxh64, zstdOneFrame, zstdFrameInfo, parseJson, canonicalJson, SerializedRoaring, ByteLru };
