"""An open table directory: outcome, Grundy value and moves of a position,
read lazily from the tables (FORMAT.md section 9)."""

import bisect
import collections
import hashlib
import os

from .errors import NotInTables, TableError, corrupt
from . import blockfile
from .manifest import VERSION_BLOCKED, is_sharded, parse_manifest, universe_bounds, universe_top
from .position import conjugate, format_rows, parse_position
from .ranking import Ranking
from .roaring import SerializedRoaring
from .tablefile import KIND_GRUNDY, KIND_LOSSES, GrundyTable, loss_payload_bound, parse_table, zstd_one_frame

# Version 1 allows at most 1024 levels.
MAX_TOP = 1024
#: The default bound of the cache of decoded pages and blocks (format 3).
DEFAULT_CACHE_BYTES = 64 << 20



def _completed_levels(complete):
    """The levels a run has completed, in words (as the Rust reader says it)."""
    if complete == 0:
        return "no level is complete yet: a run that has just started, or was stopped before its first checkpoint"
    if complete == 1:
        return "only level 1 is complete"
    return "levels 1-%d are complete" % complete

class _ByteLru:
    """Least recently used entries, bounded by the bytes they hold."""

    def __init__(self, limit):
        self.limit = limit
        self.bytes = 0
        self._d = collections.OrderedDict()

    def get(self, key):
        v = self._d.get(key)
        if v is not None:
            self._d.move_to_end(key)
            return v[0]
        return None

    def put(self, key, value, size):
        if size > self.limit:
            return
        old = self._d.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        self._d[key] = (value, size)
        self.bytes += size
        while self.bytes > self.limit and self._d:
            _, (_, s) = self._d.popitem(last=False)
            self.bytes -= s


class _BlockFile:
    """An open format 3 table whose head is checked against the manifest."""

    def __init__(self, path, entry):
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as e:
            raise TableError("%s: %s" % (path, e.strerror or e)) from None
        size = os.fstat(self.fd).st_size
        if size != entry["bytes"]:
            raise corrupt(path, "truncated or padded: %d bytes, manifest.json says %d" % (size, entry["bytes"]))
        data = self.read(0, entry["head_bytes"])
        if hashlib.sha256(data).hexdigest() != entry["head_sha256"]:
            raise corrupt(path, "head SHA-256 differs from manifest.json")
        self.head = blockfile.Head(path, data)
        if self.head.length != entry["head_bytes"] or self.head.header["file_len"] != entry["bytes"]:
            raise corrupt(path, "head length or file length differs from manifest.json")

    def read(self, offset, length):
        if hasattr(os, "pread"):
            data = os.pread(self.fd, length, offset)
        else:
            os.lseek(self.fd, offset, os.SEEK_SET)
            data = os.read(self.fd, length)
        if len(data) != length:
            raise corrupt(self.path, "truncated: %d bytes at offset %d, expected %d" % (len(data), offset, length))
        return data


def _plural(n, what):
    return "%d %s%s" % (n, what, "" if n == 1 else "s")


class LossLevel:
    """The loss set of one table (a level in format 1, a shard of one in
    format 2): ranks relative to the table's first position, its roaring
    bitmap read in place."""

    def __init__(self, path, header, payload):
        positions = header["positions"]
        raw = zstd_one_frame(payload, loss_payload_bound(positions), path, "loss payload")
        self.path = path
        self.bitmap = SerializedRoaring(raw, path)
        if self.bitmap.cardinality != header["losses"]:
            raise corrupt(path, "holds %d losses, header says %d" % (self.bitmap.cardinality, header["losses"]))
        if self.bitmap.maximum is not None and self.bitmap.maximum >= positions:
            raise corrupt(path, "a loss rank lies beyond the level")

    def contains(self, rank):
        """Whether the position of rank `rank` is a loss."""
        return rank in self.bitmap


class Tables:
    """A table directory opened for queries.

    Opening reads and checks `manifest.json` only; each level's tables are
    read, checked (size and SHA-256 against the manifest, header, CRCs,
    zstd frame, roaring structure) and cached the first time a query needs
    them. A query at level n reads level n and the levels its children fall
    on, nothing else."""

    def __init__(self, directory, cache_bytes=DEFAULT_CACHE_BYTES, against=None):
        self.dir = os.fspath(directory)
        path = os.path.join(self.dir, "manifest.json")
        self.manifest_path = path
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except (FileNotFoundError, NotADirectoryError):
            if os.path.isfile(self.dir):
                why = "a file, not a table directory"
            elif os.path.exists(self.dir):
                why = "no manifest.json; not a chomp table directory"
            else:
                why = "no such directory (no manifest.json)"
            raise TableError("%s: %s" % (self.dir, why)) from None
        except OSError as e:
            raise TableError("%s: %s" % (path, e.strerror or e)) from None
        if against is not None:
            # Pinned: the directory's manifest must be the published one, byte
            # for byte; every byte read is then checked against it.
            try:
                with open(os.fspath(against), "rb") as f:
                    published = f.read()
            except OSError as e:
                raise TableError("%s: %s" % (os.fspath(against), e.strerror or e)) from None
            if raw != published:
                raise TableError(
                    "%s: manifest.json differs from the published manifest %s: these are not the published tables (refused whole)"
                    % (self.dir, os.fspath(against))
                )
        m = parse_manifest(raw, path)
        #: The parsed manifest (a dict in the file's key order).
        self.manifest = m
        u = m["universe"]
        self.rows_bound, self.cols_bound, self.tiles_bound = u["rows"], u["cols"], u["tiles"]
        top = universe_top(u)
        if top > MAX_TOP:
            raise corrupt(path, "invalid manifest: universe with %d levels is beyond what version 1 supports" % top)
        self.top = top
        self.levels_complete = m["levels_complete"]
        self.grundy_max_tiles = m["grundy_max_tiles"]
        if self.levels_complete > top or self.grundy_max_tiles > top:
            raise corrupt(path, "invalid manifest: levels beyond the universe's largest level %d" % top)
        self.ranking = Ranking(self.rows_bound, self.cols_bound, top)
        for i, level in enumerate(m["levels"]):
            if level["positions"] != self.ranking.size(i + 1):
                raise corrupt(path, "invalid manifest: level %d has %d positions, the ranking counts %d" % (i + 1, level["positions"], self.ranking.size(i + 1)))
        # Each level's shards as (first, positions, losses); one per level in format 1.
        self.sharded = is_sharded(m)
        self.blocked = m["format_version"] == VERSION_BLOCKED
        if not self.sharded:
            self._shards = [[(0, lv["positions"], lv["losses"])] for lv in m["levels"]]
        else:
            self._shards = [[(s["first"], s["positions"], s["losses"]) for s in ss] for ss in m.get("shards", [])]
        self._firsts = [[s[0] for s in ss] for ss in self._shards]
        self._losses = {}
        self._grundy = {}
        # Format 3: open files (heads checked) and decoded pages and blocks.
        self._files = {}
        self._cache = _ByteLru(cache_bytes)

    def cache_usage(self):
        """(bytes held, bound) of the cache of decoded pages and blocks."""
        return self._cache.bytes, self._cache.limit

    def __repr__(self):
        return "chomp_tables.open(%r)" % self.dir

    # ------------------------------------------------------------ files

    def _read_listed(self, rel):
        """Reads a file the manifest lists and checks its size and SHA-256."""
        path = os.path.join(self.dir, *rel.split("/"))
        entry = self.manifest["files"].get(rel)
        if entry is None:
            raise TableError("%s: not listed in manifest.json" % path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise TableError("%s: %s" % (path, e.strerror or e)) from None
        return path, data, entry

    def _table_name(self, kind, n, shard):
        letter, sub = ("L", "losses") if kind == KIND_LOSSES else ("G", "grundy")
        return "%s/%s%04d-%04d.cht" % (sub, letter, n, shard) if self.sharded else "%s/%s%04d.cht" % (sub, letter, n)

    def _expected(self, n, shard, version):
        first, positions, losses = self._shards[n - 1][shard]
        want = {
            "version": version,
            "tiles": n,
            "max_rows": self.rows_bound or 0,
            "max_cols": self.cols_bound or 0,
            "max_tiles": self.tiles_bound or 0,
            "positions": positions,
            "losses": losses,
        }
        if version != 1:
            want.update({"shard": shard, "first": first, "shards": len(self._shards[n - 1])})
        return want

    def _block_file(self, kind, n, shard):
        """Format 3: table `shard` of level `n`, opened, its head checked (FORMAT.md section 10)."""
        key = (kind, n, shard)
        f = self._files.get(key)
        if f is None:
            rel = self._table_name(kind, n, shard)
            path = os.path.join(self.dir, *rel.split("/"))
            entry = self.manifest["files"].get(rel)
            if entry is None:
                raise TableError("%s: not listed in manifest.json" % path)
            f = _BlockFile(path, entry)
            h = f.head.header
            if h["kind"] != ("losses" if kind == KIND_LOSSES else "grundy"):
                raise corrupt(path, "expected a %s table, found a %s table" % ("loss" if kind == KIND_LOSSES else "Grundy", h["kind"]))
            for k, v in self._expected(n, shard, VERSION_BLOCKED).items():
                if h.get(k) != v:
                    raise corrupt(path, "header field %s is %s, the manifest implies %d" % (k, h.get(k), v))
            self._files[key] = f
        return f

    def _block(self, kind, n, shard, rank):
        """Format 3: the decoded block holding rank `rank` of a shard, and the rank in it."""
        f = self._block_file(kind, n, shard)
        head = f.head
        bs = head.header["block_size"]
        b, within = divmod(rank, bs)
        p, i = divmod(b, head.header["page_entries"])
        page = self._cache.get((kind, n, shard, "page", p))
        if page is None:
            off, length = head.page_span(p)
            page = head.parse_page(p, f.read(off, length))
            self._cache.put((kind, n, shard, "page", p), page, 64 + 48 * len(page))
        key = (kind, n, shard, "block", b)
        block = self._cache.get(key)
        if block is None:
            entry = page[i]
            data = f.read(entry[0], entry[1])
            if kind == KIND_LOSSES:
                block = head.loss_block(b, entry, data)
                self._cache.put(key, block, 64 + 8 * len(block))
            else:
                block = head.grundy_block(b, entry, data)
                self._cache.put(key, block, 64 + len(block))
        return block, within

    def _open_table(self, kind, n, shard):
        """Reads and checks table `shard` of level `n` (FORMAT.md sections 10 and 14)."""
        sharded = self.sharded
        rel = self._table_name(kind, n, shard)
        path, data, entry = self._read_listed(rel)
        # The structure first (more precise messages), then the manifest's size and SHA-256.
        header, payload = parse_table(path, data, kind)
        if len(data) != entry["bytes"]:
            raise corrupt(path, "%d bytes, manifest.json says %d" % (len(data), entry["bytes"]))
        if hashlib.sha256(data).hexdigest() != entry["sha256"].lower():
            raise corrupt(path, "SHA-256 differs from manifest.json")
        first, positions, losses = self._shards[n - 1][shard]
        want = self._expected(n, shard, 2 if sharded else 1)
        if not sharded and positions != self.ranking.size(n):
            raise corrupt(path, "level %d has %d positions, the ranking counts %d" % (n, positions, self.ranking.size(n)))
        for k, v in want.items():
            if header.get(k) != v:
                raise corrupt(path, "header field %s is %s, the manifest implies %d" % (k, header.get(k), v))
        return path, header, payload

    def _shard_of(self, n, rank):
        """(shard index, rank within the shard) of rank `rank` of level `n`."""
        firsts = self._firsts[n - 1]
        i = bisect.bisect_right(firsts, rank) - 1
        return i, rank - firsts[i]

    def _cached(self, cache, kind, make, n, shard):
        """Table `shard` of level `n` of one kind, read, checked and built by
        `make` on first use, then kept in `cache`."""
        table = cache.get((n, shard))
        if table is None:
            table = make(*self._open_table(kind, n, shard))
            cache[(n, shard)] = table
        return table

    def _loss_table(self, n, shard):
        """The losses of table `shard` of level `n`."""
        return self._cached(self._losses, KIND_LOSSES, LossLevel, n, shard)

    def is_loss_rank(self, n, rank):
        """Whether the position of rank `rank` in level `n` is a loss: the
        shard holding `rank` is asked (the whole level in format 1)."""
        shard, r = self._shard_of(n, rank)
        if self.blocked:
            block, within = self._block(KIND_LOSSES, n, shard, r)
            i = bisect.bisect_left(block, within)
            return i < len(block) and block[i] == within
        return self._loss_table(n, shard).contains(r)

    def grundy_table(self, n, shard=0):
        """Grundy table `shard` of level `n` (read and checked on first use)."""
        return self._cached(self._grundy, KIND_GRUNDY, GrundyTable, n, shard)

    def levels_loaded(self):
        """The levels whose loss tables have been read so far (sorted)."""
        return sorted({n for n, _ in self._losses} | {n for kind, n, _ in self._files if kind == KIND_LOSSES})

    # ------------------------------------------------------------ positions

    def _inside(self, rows):
        return (
            (self.rows_bound is None or len(rows) <= self.rows_bound)
            and (self.cols_bound is None or rows[0] <= self.cols_bound)
            and sum(rows) <= self.top
        )

    def _locate(self, rows):
        """(level, rank) of a position, found by its transpose when only that
        fits the tables (same outcome and value)."""
        found = rows if self._inside(rows) else None
        if found is None:
            conj = conjugate(rows)
            found = conj if self._inside(conj) else None
        n = sum(rows)
        if found is None:
            size = "%s, %s, %s" % (_plural(len(rows), "row"), _plural(rows[0], "column"), _plural(n, "tile"))
            raise NotInTables("position %s (%s) is outside the tables (%s)" % (format_rows(rows), size, universe_bounds(self.manifest["universe"])))
        if n > self.levels_complete:
            raise NotInTables("level %d is not in the tables (%s)" % (n, _completed_levels(self.levels_complete)))
        return n, self.ranking.rank(found)

    def _grundy_at(self, n, rank, loss, rows):
        if n > min(self.grundy_max_tiles, self.levels_complete):
            return None
        shard, r = self._shard_of(n, rank)
        if self.blocked:
            block, within = self._block(KIND_GRUNDY, n, shard, r)
            g = block[within]
            path = self._block_file(KIND_GRUNDY, n, shard).path
        else:
            table = self.grundy_table(n, shard)
            g = table.value(r)
            path = table.path
        if (g == 0) != loss:
            raise corrupt(path, "Grundy value %d of %s contradicts the loss table" % (g, format_rows(rows)))
        return g

    def _value(self, rows):
        """(level, loss?, Grundy value or None) of valid rows."""
        n, rank = self._locate(rows)
        loss = self.is_loss_rank(n, rank)
        return n, loss, self._grundy_at(n, rank, loss, rows)

    def outcome(self, pos):
        """"win" or "loss" for the player to move."""
        n, rank = self._locate(parse_position(pos))
        return "loss" if self.is_loss_rank(n, rank) else "win"

    def grundy(self, pos):
        """The misère Grundy value, or None where the tables hold none for its level."""
        return self._value(parse_position(pos))[2]

    def moves(self, pos):
        """Every move with the position, outcome and value it leads to, best
        first (as `chomp query --json` lists them): winning moves first; among
        the others the one leaving the opponent the largest position; ties in
        row-major cell order."""
        return self._moves(parse_position(pos))

    def _moves(self, rows):
        self._locate(rows)
        out = []
        for a, length in enumerate(rows):
            for b in range(length):
                if a == 0 and b == 0:
                    continue
                child = [v if i < a else min(v, b) for i, v in enumerate(rows)]
                child = [v for v in child if v > 0]
                _, loss, g = self._value(child)
                out.append({"move": [a, b], "position": child, "outcome": "loss" if loss else "win", "grundy": g})
        out.sort(key=lambda m: (m["outcome"] != "loss", -sum(m["position"]), m["move"]))
        return out

    def _name_of(self, kind, rows):
        n, rank = self._locate(rows)
        return self._table_name(kind, n, self._shard_of(n, rank)[0])

    def _check_rules(self, rows, n, loss, g, moves):
        """What the tables say of a position against what they say of its
        children (FORMAT.md section 10): a loss has no losing child, a win has
        one, a Grundy value is the mex of its children's. A contradiction is
        damage, whatever the checksums say: raise instead of answering."""

        def fail(what):
            return TableError("%s: damaged tables: %s" % (self.dir, what))

        where = self._name_of(KIND_LOSSES, rows)
        losing = [m for m in moves if m["outcome"] == "loss"]
        if loss and losing:
            m = losing[0]
            raise fail("position %s is a loss in %s, but its move (%d,%d) leads to %s, a loss in %s" % (format_rows(rows), where, m["move"][0], m["move"][1], format_rows(m["position"]), self._name_of(KIND_LOSSES, m["position"])))
        if not loss and not losing:
            raise fail("position %s is a win in %s, but none of its moves leads to a loss" % (format_rows(rows), where))
        if g is not None:
            values = set()
            for m in moves:
                if m["grundy"] is None:
                    raise fail("position %s has a Grundy value, a child of it none" % format_rows(rows))
                values.add(m["grundy"])
            mex = 0
            while mex in values:
                mex += 1
            if mex != g:
                raise fail("position %s has Grundy value %d in %s, the mex of its children's values is %d" % (format_rows(rows), g, self._name_of(KIND_GRUNDY, rows), mex))

    def winning_moves(self, pos):
        """The winning moves (to a loss) as [row, col] cells, row-major."""
        return sorted(m["move"] for m in self.moves(pos) if m["outcome"] == "loss")

    def query(self, pos):
        """Everything the tables say about a position: the dict `chomp query
        --json` prints, with the same keys in the same order (position, tiles,
        outcome, grundy, grundy_normal, winning_moves, moves).

        `pos` is text ("5 3 1", "5,3,1") or a sequence of row lengths.
        Raises `InvalidPosition` for malformed input, `NotInTables` for a
        position the tables do not cover, `TableError` for damaged tables."""
        rows = parse_position(pos)
        n, loss, g = self._value(rows)
        moves = self._moves(rows)
        winning = sorted(m["move"] for m in moves if m["outcome"] == "loss")
        self._check_rules(rows, n, loss, g, moves)
        return {
            "position": rows,
            "tiles": n,
            "outcome": "loss" if loss else "win",
            "grundy": g,
            "grundy_normal": None if g is None else g + 1,
            "winning_moves": winning,
            "moves": moves,
        }
