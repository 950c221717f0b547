// The reader itself: an open table directory, and what it answers of a
// position (`chomp query --json`), checked against the rules of the game.

import { NotInTables, TableError, corrupt } from "./errors.js";
import { sha256Hex } from "./bytes.js";
import { conjugate, formatRows, parsePosition, plural, sum } from "./position.js";
import { Ranking } from "./ranking.js";
import { isLevelSharded, universeBounds, universeTop } from "./manifest.js";
import { GrundyTable, KIND_GRUNDY, KIND_LOSSES, KIND_NAMES, KIND_WORDS, LossTable, parseTable } from "./whole.js";
import { Head } from "./blocks.js";
import { ByteLru } from "./cache.js";

/** Format-3 tables up to this size are read in one request (a head, a page
 * and a block would be three), kept beside the heads of the opened tables. */
export const SMALL_TABLE_BYTES = 4 * 1024;

const MAX_TOP = 1024;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The levels a run has completed, in words (as the Rust reader says it). */
function completedLevels(complete) {
  if (complete === 0) return "no level is complete yet: a run that has just started, or was stopped before its first checkpoint";
  if (complete === 1) return "only level 1 is complete";
  return `levels 1-${complete} are complete`;
}

const pad4 = (n) => String(n).padStart(4, "0");

/** An open table directory. Build it with `openTables`. */
export class Tables {
  constructor(src, manifest, options) {
    this.src = src;
    this.dir = src.label;
    this.manifestPath = src.path("manifest.json");
    /** The checked manifest.json. */
    this.manifest = manifest;
    this._stats = src.stats;
    const m = manifest;
    const u = m.universe;
    this.rowsBound = u.rows;
    this.colsBound = u.cols;
    this.tilesBound = u.tiles;
    const path = this.manifestPath;
    const top = universeTop(u);
    if (top > MAX_TOP) throw corrupt(path, `invalid manifest: universe with ${top} levels is beyond what version 1 supports`);
    this.top = top;
    this.levelsComplete = m.levels_complete;
    this.grundyMaxTiles = m.grundy_max_tiles;
    if (this.levelsComplete > top || this.grundyMaxTiles > top) {
      throw corrupt(path, `invalid manifest: levels beyond the universe's largest level ${top}`);
    }
    // Ranks are needed only in complete levels. The count table has
    // (R + 1)(L + 1)(C + 1) entries: where that passes 2^25, some level holds
    // far more than 2^53 positions (refused below anyway), so refuse first.
    const L = this.levelsComplete;
    const entries = (this.rowsBound !== null && this.rowsBound < L ? this.rowsBound + 1 : 1) * (L + 1) * (Math.min(this.colsBound ?? L, L) + 1);
    if (entries > 2 ** 25) throw corrupt(path, `invalid manifest: ${L} levels of this universe hold more than 2^53 positions, more than this reader handles`);
    this.ranking = new Ranking(this.rowsBound, this.colsBound, L);
    m.levels.forEach((level, i) => {
      const size = this.ranking.size(i + 1);
      if (size > MAX_SAFE) throw corrupt(path, `invalid manifest: level ${i + 1} has more than 2^53 positions, more than this reader handles`);
      if (level.positions !== size) {
        throw corrupt(path, `invalid manifest: level ${i + 1} has ${level.positions} positions, the ranking counts ${size}`);
      }
    });
    this.sharded = isLevelSharded(m);
    this.blocked = m.format_version === 3;
    this.shards = this.sharded
      ? (m.shards || []).map((ss) => ss.map((s) => [s.first, s.positions, s.losses]))
      : m.levels.map((lv) => [[0, lv.positions, lv.losses]]);
    this.firsts = this.shards.map((ss) => ss.map((s) => s[0]));
    this.cache = new ByteLru(options.cacheBytes);
    this.pending = new Map();
    this.heads = new Map();
  }

  /** Bytes read (or transferred) and requests made so far, and bytes held by the cache. */
  stats() {
    return { bytesRead: this._stats.bytesRead, requests: this._stats.requests, cacheBytes: this.cache.bytes };
  }

  // ---------------------------------------------------------------- files

  tableName(kind, n, shard) {
    const [letter, sub] = kind === KIND_LOSSES ? ["L", "losses"] : ["G", "grundy"];
    return this.sharded ? `${sub}/${letter}${pad4(n)}-${pad4(shard)}.cht` : `${sub}/${letter}${pad4(n)}.cht`;
  }

  expected(n, shard, version) {
    const [first, positions, losses] = this.shards[n - 1][shard];
    const want = {
      version,
      tiles: n,
      max_rows: this.rowsBound || 0,
      max_cols: this.colsBound || 0,
      max_tiles: this.tilesBound || 0,
      positions,
      losses,
    };
    if (version !== 1) Object.assign(want, { shard, first, shards: this.shards[n - 1].length });
    return want;
  }

  checkExpected(path, header, want) {
    for (const [k, v] of Object.entries(want)) {
      if (header[k] !== v) throw corrupt(path, `header field ${k} is ${header[k]}, the manifest implies ${v}`);
    }
  }

  entry(rel) {
    const files = this.manifest.files;
    const e = Object.prototype.hasOwnProperty.call(files, rel) ? files[rel] : undefined;
    if (e === undefined) throw new TableError(`${this.src.path(rel)}: not listed in manifest.json`);
    return e;
  }

  /** `make()` once per key while it runs: concurrent callers share one promise;
   * a result is put in the cache (checked data only) with the size it reports. */
  load(key, make) {
    const hit = this.cache.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let p = this.pending.get(key);
    if (!p) {
      p = (async () => {
        const { value, bytes } = await make();
        this.cache.put(key, value, bytes);
        return value;
      })();
      this.pending.set(key, p);
      const done = () => this.pending.delete(key);
      p.then(done, done);
    }
    return p;
  }

  async readExact(rel, path, entry, offset, length) {
    const { data, total } = await this.src.readRange(rel, offset, length);
    if (total !== null && total !== entry.bytes) throw corrupt(path, `truncated or padded: ${total} bytes, manifest.json says ${entry.bytes}`);
    if (data.length !== length) {
      throw corrupt(path, `truncated: ${data.length} bytes at offset ${offset}, expected ${length}`);
    }
    return data;
  }

  /** Format 3: table `shard` of level `n`, its head read and checked (FORMAT.md section 17, checks 1-3). */
  blockFile(kind, n, shard) {
    const key = `${kind}:${n}:${shard}`;
    let p = this.heads.get(key);
    if (!p) {
      p = this.openBlockFile(kind, n, shard);
      this.heads.set(key, p);
      p.catch(() => {
        if (this.heads.get(key) === p) this.heads.delete(key);
      });
    }
    return p;
  }

  async openBlockFile(kind, n, shard) {
    const rel = this.tableName(kind, n, shard);
    const path = this.src.path(rel);
    const entry = this.entry(rel);
    // A small table is read in one request, its pages and blocks then taken
    // from these bytes (and checked along the chain as if read one by one).
    const whole = entry.bytes <= SMALL_TABLE_BYTES ? await this.readExact(rel, path, entry, 0, entry.bytes) : null;
    const data = whole ? whole.subarray(0, entry.head_bytes) : await this.readExact(rel, path, entry, 0, entry.head_bytes);
    if ((await sha256Hex(data)) !== entry.head_sha256) throw corrupt(path, "head SHA-256 differs from manifest.json");
    const head = new Head(path, data);
    if (head.length !== entry.head_bytes || head.header.file_len !== entry.bytes) {
      throw corrupt(path, "head length or file length differs from manifest.json");
    }
    const h = head.header;
    if (h.kind !== KIND_NAMES[kind]) throw corrupt(path, `expected a ${KIND_WORDS[kind]} table, found a ${h.kind} table`);
    this.checkExpected(path, h, this.expected(n, shard, 3));
    return { rel, path, entry, head, whole };
  }

  /** Bytes `offset .. offset + length` of a format-3 table: from its bytes read whole, or read now. */
  span(f, offset, length) {
    if (f.whole) return Promise.resolve(f.whole.subarray(offset, offset + length));
    return this.readExact(f.rel, f.path, f.entry, offset, length);
  }

  /** Format 3: the decoded block holding rank `rank` of a table, and the rank in it. */
  async block(kind, n, shard, rank) {
    const f = await this.blockFile(kind, n, shard);
    const h = f.head.header;
    if (!(rank >= 0 && rank < h.positions)) throw corrupt(f.path, `rank ${rank} lies beyond the table's ${h.positions} positions`);
    const b = Math.floor(rank / h.block_size);
    const within = rank - b * h.block_size;
    const p = Math.floor(b / h.page_entries);
    const i = b - p * h.page_entries;
    const page = await this.load(`${f.rel}#page${p}`, async () => {
      const [off, length] = f.head.pageSpan(p);
      const pg = await f.head.parsePage(p, await this.span(f, off, length));
      return { value: pg, bytes: pg.bytes };
    });
    const block = await this.load(`${f.rel}#block${b}`, async () => {
      const data = await this.span(f, page.offsets[i], page.lens[i]);
      const value = kind === KIND_LOSSES ? await f.head.lossBlock(b, page, i, data) : await f.head.grundyBlock(b, page, i, data);
      return { value, bytes: 64 + value.byteLength };
    });
    return { block, within, path: f.path };
  }

  /** Formats 1 and 2: table `shard` of level `n`, read whole and checked (FORMAT.md sections 10 and 14). */
  wholeTable(kind, n, shard) {
    const rel = this.tableName(kind, n, shard);
    return this.load(`${rel}#table`, async () => {
      const entry = this.entry(rel);
      const path = this.src.path(rel);
      const data = await this.src.readAll(rel);
      // The structure first (more precise messages), then the manifest's size and SHA-256.
      const { header, payload } = parseTable(path, data, kind);
      if (data.length !== entry.bytes) throw corrupt(path, `${data.length} bytes, manifest.json says ${entry.bytes}`);
      if ((await sha256Hex(data)) !== entry.sha256.toLowerCase()) throw corrupt(path, "SHA-256 differs from manifest.json");
      const [, positions] = this.shards[n - 1][shard];
      if (!this.sharded && positions !== this.ranking.size(n)) {
        throw corrupt(path, `level ${n} has ${positions} positions, the ranking counts ${this.ranking.size(n)}`);
      }
      this.checkExpected(path, header, this.expected(n, shard, this.sharded ? 2 : 1));
      const value = kind === KIND_LOSSES ? new LossTable(path, header, payload) : new GrundyTable(path, header, payload);
      return { value, bytes: value.bytes };
    });
  }

  /** [shard index, rank within the shard] of rank `rank` of level `n`. */
  shardOf(n, rank) {
    const firsts = this.firsts[n - 1];
    let lo = 0;
    let hi = firsts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (firsts[mid] <= rank) lo = mid + 1;
      else hi = mid;
    }
    return [lo - 1, rank - firsts[lo - 1]];
  }

  async isLossRank(n, rank) {
    const [shard, r] = this.shardOf(n, rank);
    if (this.blocked) {
      const { block, within } = await this.block(KIND_LOSSES, n, shard, r);
      let lo = 0;
      let hi = block.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (block[mid] < within) lo = mid + 1;
        else hi = mid;
      }
      return lo < block.length && block[lo] === within;
    }
    return (await this.wholeTable(KIND_LOSSES, n, shard)).has(r);
  }

  async grundyAt(n, rank) {
    if (n > Math.min(this.grundyMaxTiles, this.levelsComplete)) return null;
    const [shard, r] = this.shardOf(n, rank);
    if (this.blocked) {
      const { block, within } = await this.block(KIND_GRUNDY, n, shard, r);
      return block[within];
    }
    const table = await this.wholeTable(KIND_GRUNDY, n, shard);
    const b = Math.floor(r / table.blockSize);
    const values = await this.load(`${this.tableName(KIND_GRUNDY, n, shard)}#block${b}`, async () => {
      const v = table.block(b);
      return { value: v, bytes: 64 + v.length };
    });
    return values[r - b * table.blockSize];
  }

  // ---------------------------------------------------------------- positions

  inside(rows) {
    return (this.rowsBound === null || rows.length <= this.rowsBound) && (this.colsBound === null || rows[0] <= this.colsBound) && sum(rows) <= this.top;
  }

  /** [level, rank] of a position, found by its transpose when only that fits the tables. */
  locate(rows) {
    let found = this.inside(rows) ? rows : null;
    if (found === null) {
      const conj = conjugate(rows);
      found = this.inside(conj) ? conj : null;
    }
    const n = sum(rows);
    if (found === null) {
      const size = `${plural(rows.length, "row")}, ${plural(rows[0], "column")}, ${plural(n, "tile")}`;
      throw new NotInTables(`position ${formatRows(rows)} (${size}) is outside the tables (${universeBounds(this.manifest.universe)})`);
    }
    if (n > this.levelsComplete) throw new NotInTables(`level ${n} is not in the tables (${completedLevels(this.levelsComplete)})`);
    return [n, this.ranking.rank(found)];
  }

  async value(rows) {
    const [n, rank] = this.locate(rows);
    const [loss, g] = await Promise.all([this.isLossRank(n, rank), this.grundyAt(n, rank)]);
    return { n, loss, g };
  }

  nameOf(kind, rows) {
    try {
      const [n, rank] = this.locate(rows);
      return this.tableName(kind, n, this.shardOf(n, rank)[0]);
    } catch {
      return "?";
    }
  }

  /** What the tables say of a position against what they say of its children
   * (FORMAT.md section 10): a contradiction is damage, never an answer. */
  checkRules(rows, loss, g, moves) {
    const fail = (what) => new TableError(`${this.dir}: damaged tables: ${what}`);
    const losses = (p) => this.nameOf(KIND_LOSSES, p);
    const values = (p) => this.nameOf(KIND_GRUNDY, p);
    const p = formatRows(rows);
    const losing = moves.find((m) => m.outcome === "loss");
    if (loss && losing) {
      throw fail(`position ${p} is a loss in ${losses(rows)}, but its move (${losing.move[0]},${losing.move[1]}) leads to ${formatRows(losing.position)}, a loss in ${losses(losing.position)}`);
    }
    if (!loss && !losing) throw fail(`position ${p} is a win in ${losses(rows)}, but none of its moves leads to a loss`);
    if (g !== null) {
      if ((g === 0) !== loss) throw fail(`position ${p} has Grundy value ${g} in ${values(rows)} but is a ${loss ? "loss" : "win"} in ${losses(rows)}`);
      const seen = new Uint8Array(257);
      for (const m of moves) {
        if (m.grundy === null) throw fail(`position ${p} has a Grundy value in ${values(rows)}, a child of it none`);
        seen[m.grundy] = 1;
      }
      let mex = 0;
      while (seen[mex]) mex++;
      if (mex !== g) throw fail(`position ${p} has Grundy value ${g} in ${values(rows)}, the mex of its children's values is ${mex}`);
    }
    for (const m of moves) {
      if (m.grundy !== null && (m.grundy === 0) !== (m.outcome === "loss")) {
        throw fail(`position ${formatRows(m.position)} has Grundy value ${m.grundy} in ${values(m.position)} but is a ${m.outcome} in ${losses(m.position)}`);
      }
    }
  }

  /** Everything the tables say about a position: the object `chomp query --json`
   * prints (position, tiles, outcome, grundy, grundy_normal, winning_moves, moves). */
  async query(pos) {
    const rows = parsePosition(pos);
    const [n] = this.locate(rows);
    const children = [];
    for (let a = 0; a < rows.length; a++) {
      for (let b = 0; b < rows[a]; b++) {
        if (a === 0 && b === 0) continue;
        const child = [];
        for (let i = 0; i < rows.length; i++) {
          const v = i < a ? rows[i] : Math.min(rows[i], b);
          if (v === 0) break;
          child.push(v);
        }
        children.push({ move: [a, b], position: child });
      }
    }
    const [self, ...values] = await Promise.all([this.value(rows), ...children.map((c) => this.value(c.position))]);
    const moves = children.map((c, i) => ({
      move: c.move,
      position: c.position,
      outcome: values[i].loss ? "loss" : "win",
      grundy: values[i].g,
    }));
    this.checkRules(rows, self.loss, self.g, moves);
    const tiles = moves.map((m) => sum(m.position));
    const order = moves.map((_, i) => i);
    order.sort((x, y) => {
      const a = moves[x];
      const b = moves[y];
      return (a.outcome === "loss" ? 0 : 1) - (b.outcome === "loss" ? 0 : 1) || tiles[y] - tiles[x] || a.move[0] - b.move[0] || a.move[1] - b.move[1];
    });
    const sorted = order.map((i) => moves[i]);
    const winning = moves.filter((m) => m.outcome === "loss").map((m) => [m.move[0], m.move[1]]);
    return {
      position: rows,
      tiles: n,
      outcome: self.loss ? "loss" : "win",
      grundy: self.g,
      grundy_normal: self.g === null ? null : self.g + 1,
      winning_moves: winning,
      moves: sorted,
    };
  }
}
