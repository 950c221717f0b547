// Type declarations of chomp-tables.js: read chomp-tables directories (FORMAT.md).

/** A move: the bitten cell [row, col], 0-based; [0, 0] is the poisoned tile. */
export type Cell = [number, number];

export type Outcome = "win" | "loss";

/** One move of an answer, as `chomp query --json` lists it. */
export interface MoveInfo {
  move: Cell;
  /** The position the move leads to, in the orientation asked. */
  position: number[];
  outcome: Outcome;
  /** Its misère Grundy value, or null where the tables hold none. */
  grundy: number | null;
}

/** Everything the tables say about a position: the object `chomp query --json` prints. */
export interface Answer {
  /** The rows as parsed, top row first (never transposed). */
  position: number[];
  tiles: number;
  outcome: Outcome;
  /** Misère Grundy value, or null where the tables hold none for this level. */
  grundy: number | null;
  /** Normal-play value (grundy + 1), or null. */
  grundy_normal: number | null;
  /** The moves to a loss, sorted by (row, col). */
  winning_moves: Cell[];
  /** Every move, best first: winning moves, then the larger position left, then (row, col). */
  moves: MoveInfo[];
}

export interface Stats {
  /** Bytes read from disk or transferred over HTTP so far (the manifest included). */
  bytesRead: number;
  /** Reads or HTTP requests made so far. */
  requests: number;
  /** Bytes held by the cache of decoded pages, blocks and tables. */
  cacheBytes: number;
}

export interface OpenOptions {
  /** Bound of the cache of decoded pages, blocks and tables (least recently used out first). Default 64 MiB. */
  cacheBytes?: number;
  /** The fetch function for URLs (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /** HTTP requests in flight at once (default 8). */
  concurrency?: number;
  /** The name a Map or directory handle goes by in messages. */
  label?: string;
  /** The SHA-256 (64 lowercase hex digits) manifest.json must have, e.g. from a site's site.json: the checks then start from this digest, not from the host. */
  manifestSha256?: string;
  /** The published manifest itself (bytes or text, e.g. results/…-manifest.json): manifest.json must equal it byte for byte, else the directory is refused whole. */
  against?: Uint8Array | ArrayBuffer | string;
  /**
   * The table files packed into one file beside manifest.json (`chomp site --pack`, site.json's `pack`):
   * reads issued together go out as one request of several ranges (multipart/byteranges), one range a
   * request where the server answers otherwise. Only with a URL.
   */
  pack?: { file: string; files: Record<string, [number, number]> };
}

/** The checked manifest.json (FORMAT.md section 3; sections 14 and 17 add fields). */
export interface Manifest {
  format: "chomp-tables";
  format_version: 1 | 2 | 3;
  tool_version: string;
  universe: { rows: number | null; cols: number | null; tiles: number | null };
  grundy_max_tiles: number;
  shard_positions?: number;
  levels_complete: number;
  complete: boolean;
  levels: {
    tiles: number;
    positions: number;
    losses: number;
    grundy_histogram?: number[];
    wins_one_move?: number;
    wins_several_moves?: number;
    winning_moves_histogram?: number[];
  }[];
  shards?: { first: number; positions: number; losses: number }[][];
  checks?: { tiles: number; positions: number; losses: number }[];
  files: Record<string, { bytes: number; sha256: string; head_bytes?: number; head_sha256?: string }>;
  checksum: string;
}

/** What `openTables` reads from. */
export type Source =
  | string // an http(s) URL; a directory path in Node; in a browser also a URL of the page's site
  | URL
  | Map<string, Blob | File | Uint8Array | ArrayBuffer> // relative path -> contents
  | FileSystemDirectoryHandle;

/** An open table directory. */
export interface Tables {
  /** The checked manifest.json. */
  readonly manifest: Manifest;
  /** The answer for a position given as text ("5 3 1", "5,3,1") or as row lengths. */
  query(position: string | readonly number[]): Promise<Answer>;
  stats(): Stats;
}

/** Opens a table directory: reads and checks manifest.json; tables are read when a question needs them. */
export function openTables(source: Source, options?: OpenOptions): Promise<Tables>;

/** The rows of a position (FORMAT.md section 9); throws InvalidPosition with chomp's message. */
export function parsePosition(position: string | readonly number[]): number[];
/** The transpose of a position (its columns as rows). */
export function conjugate(rows: readonly number[]): number[];

/** The IEEE CRC-32 of FORMAT.md section 1. */
export function crc32(bytes: Uint8Array): number;

/** The ranking of FORMAT.md section 8, up to level `top`. */
export class Ranking {
  constructor(rows: number | null, cols: number | null, top: number);
  size(n: number): number;
  rank(rows: readonly number[]): number;
  unrank(n: number, rank: number): number[];
}

/** Every error of this package: one line, naming the file or directory involved. */
export class ChompTablesError extends Error {}
/** A file is missing, unreadable, damaged or mismatched, or the tables contradict the rules of the game. */
export class TableError extends ChompTablesError {}
/** The question is malformed or not covered by the tables. */
export class QuestionError extends ChompTablesError {}
/** Not a Chomp position. */
export class InvalidPosition extends QuestionError {}
/** A valid position the tables do not cover (outside the universe, or its level not complete). */
export class NotInTables extends QuestionError {}

export const DEFAULT_CACHE_BYTES: number;
export const DEFAULT_CONCURRENCY: number;
/** Tables of at most this many bytes are read whole, in one request. */
export const SMALL_TABLE_BYTES: number;
/** Most ranges a packed site's reader asks in one request. */
export const PACK_RANGES: number;
