"""An open table directory: outcome, Grundy value and moves of a position,
read lazily from the tables (FORMAT.md section 9)."""

import bisect
import hashlib
import os

from .errors import NotInTables, TableError, corrupt
from .manifest import parse_manifest, universe_bounds, universe_top
from .position import conjugate, format_rows, parse_position
from .ranking import Ranking
from .roaring import SerializedRoaring
from .tablefile import KIND_GRUNDY, KIND_LOSSES, GrundyTable, loss_payload_bound, parse_table, zstd_one_frame

# Version 1 allows at most 1024 levels.
MAX_TOP = 1024


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

    def __init__(self, directory):
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
        if m["format_version"] == 1:
            self._shards = [[(0, lv["positions"], lv["losses"])] for lv in m["levels"]]
        else:
            self._shards = [[(s["first"], s["positions"], s["losses"]) for s in ss] for ss in m["shards"]]
        self._firsts = [[s[0] for s in ss] for ss in self._shards]
        self._losses = {}
        self._grundy = {}

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

    def _open_table(self, kind, n, shard):
        """Reads and checks table `shard` of level `n` (FORMAT.md sections 10 and 14)."""
        letter, sub = ("L", "losses") if kind == KIND_LOSSES else ("G", "grundy")
        sharded = self.manifest["format_version"] == 2
        rel = "%s/%s%04d-%04d.cht" % (sub, letter, n, shard) if sharded else "%s/%s%04d.cht" % (sub, letter, n)
        path, data, entry = self._read_listed(rel)
        # The structure first (more precise messages), then the manifest's size and SHA-256.
        header, payload = parse_table(path, data, kind)
        if len(data) != entry["bytes"]:
            raise corrupt(path, "%d bytes, manifest.json says %d" % (len(data), entry["bytes"]))
        if hashlib.sha256(data).hexdigest() != entry["sha256"].lower():
            raise corrupt(path, "SHA-256 differs from manifest.json")
        first, positions, losses = self._shards[n - 1][shard]
        want = {
            "version": 2 if sharded else 1,
            "tiles": n,
            "max_rows": self.rows_bound or 0,
            "max_cols": self.cols_bound or 0,
            "max_tiles": self.tiles_bound or 0,
            "positions": positions,
            "losses": losses,
        }
        if sharded:
            want.update({"shard": shard, "first": first, "shards": len(self._shards[n - 1])})
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
        return self._loss_table(n, shard).contains(r)

    def grundy_table(self, n, shard=0):
        """Grundy table `shard` of level `n` (read and checked on first use)."""
        return self._cached(self._grundy, KIND_GRUNDY, GrundyTable, n, shard)

    def levels_loaded(self):
        """The levels whose loss tables have been read so far (sorted)."""
        return sorted({n for n, _ in self._losses})

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
            raise NotInTables("level %d is not in the tables (levels 1..=%d are complete)" % (n, self.levels_complete))
        return n, self.ranking.rank(found)

    def _grundy_at(self, n, rank, loss, rows):
        if n > min(self.grundy_max_tiles, self.levels_complete):
            return None
        shard, r = self._shard_of(n, rank)
        table = self.grundy_table(n, shard)
        g = table.value(r)
        if (g == 0) != loss:
            raise corrupt(table.path, "Grundy value %d of %s contradicts the loss table" % (g, format_rows(rows)))
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
        if loss != (not winning):
            raise TableError("%s: tables disagree: %s is a %s but has %d winning moves" % (self.dir, format_rows(rows), "loss" if loss else "win", len(winning)))
        return {
            "position": rows,
            "tiles": n,
            "outcome": "loss" if loss else "win",
            "grundy": g,
            "grundy_normal": None if g is None else g + 1,
            "winning_moves": winning,
            "moves": moves,
        }
