"""Few-row table directories (FORMAT.md section 18): a box of at most 8 rows
(or 8 columns) stored as one entry per prefix, the losing length of the last
row. Every block read is checked (its CRC-32) before an entry of it is used;
a directory of the older layout (`fewrow.prefixes`, no manifest) is read
after checking the CRC-32 of its whole file.

    t = chomp_tables.open("runs/fewrow-4x500")   # a FewRowTables
    t.query("500 400 3 1")                       # the dict of `chomp query --json`
"""

import hashlib
import json
import math
import os
import struct
import zlib

from .errors import InvalidPosition, NotInTables, TableError, corrupt

FORMAT_NAME = "chomp-fewrow-tables"
VERSION = 1
MANIFEST = "manifest.json"
TABLE = "fewrow.table"
LEGACY_TABLE = "fewrow.prefixes"
LEVELS = "levels.csv"
NONE = 0xFFFF
MAX_ROWS = 8
MAX_COLS = 0xFFFF
_FIELDS = struct.Struct("<8sHHIIQIIQQ")  # 52 bytes
_KEYS = ["format", "format_version", "tool_version", "engine", "universe", "prefixes", "positions", "losses", "files", "checksum"]


def is_few_row_dir(directory):
    """Whether `directory` holds a few-row manifest, or the older layout."""
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return os.path.isfile(os.path.join(directory, LEGACY_TABLE))
    try:
        return json.loads(raw.decode("utf-8")).get("format") == FORMAT_NAME
    except (ValueError, AttributeError):
        return False


def _canonical(m, checksum):
    c = dict(m)
    c["checksum"] = checksum
    return json.dumps(c, indent=2, ensure_ascii=False) + "\n"


def parse_manifest(path, raw):
    """Checks a few-row manifest's bytes; returns the parsed object."""
    if b"\r" in raw:
        raise corrupt(path, "not in canonical form (damaged or edited)")
    try:
        m = json.loads(raw.decode("utf-8"))
    except ValueError as e:
        raise corrupt(path, "invalid few-row manifest: %s" % e) from None
    if not isinstance(m, dict) or m.get("format") != FORMAT_NAME:
        raise corrupt(path, "invalid few-row manifest: format is not %r" % FORMAT_NAME)
    if m.get("format_version") != VERSION:
        raise corrupt(path, "invalid few-row manifest: format version %r is not %d" % (m.get("format_version"), VERSION))
    if list(m) != _KEYS:
        raise corrupt(path, "invalid few-row manifest: fields %s, not %s" % (list(m), _KEYS))
    if hashlib.sha256(_canonical(m, "").encode("utf-8")).hexdigest() != m["checksum"]:
        raise corrupt(path, "invalid few-row manifest: checksum mismatch (damaged or edited)")
    if _canonical(m, m["checksum"]).encode("utf-8") != raw:
        raise corrupt(path, "invalid few-row manifest: not in canonical form (damaged or edited)")
    u = m["universe"]
    if m["engine"] != "few-row" or not isinstance(u, dict) or list(u) != ["rows", "cols"]:
        raise corrupt(path, "invalid few-row manifest: engine or universe")
    rows, cols = u["rows"], u["cols"]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (rows, cols)):
        raise corrupt(path, "invalid few-row manifest: the box's sides")
    if min(rows, cols) > MAX_ROWS or max(rows, cols) > MAX_COLS:
        raise corrupt(path, "invalid few-row manifest: a box the few-row engine does not take")
    k, n = min(rows, cols), max(rows, cols)
    if m["prefixes"] != math.comb(n + k - 1, k - 1) or m["positions"] != math.comb(n + k, k) - 1:
        raise corrupt(path, "invalid few-row manifest: prefixes or positions do not fit the box")
    if not isinstance(m["losses"], int) or not 0 <= m["losses"] <= m["positions"]:
        raise corrupt(path, "invalid few-row manifest: losses")
    files = m["files"]
    if not isinstance(files, dict) or list(files) != [TABLE, LEVELS]:
        raise corrupt(path, "invalid few-row manifest: files must be exactly %s and %s" % (TABLE, LEVELS))
    t = files[TABLE]
    if list(t) != ["bytes", "sha256", "head_bytes", "head_sha256"] or list(files[LEVELS]) != ["bytes", "sha256"]:
        raise corrupt(path, "invalid few-row manifest: the fields of a listed file")
    if not isinstance(t["head_bytes"], int) or not 56 <= t["head_bytes"] < t["bytes"]:
        raise corrupt(path, "invalid few-row manifest: the table's head")
    return m


def _rank_terms(m, n):
    """terms[i][v] = C(v + m - i - 1, m - i): the rank's share of entry i being v."""
    return [[math.comb(v + m - i - 1, m - i) for v in range(n + 1)] for i in range(m)]


def parse_rows(text):
    """A few-row position from text ("3 2 1", "3,2,1") or a list of ints."""
    if isinstance(text, str):
        parts = [p for p in text.replace(",", " ").split() if p]
        try:
            rows = [int(p) for p in parts]
        except ValueError:
            raise InvalidPosition("invalid position %r: not a list of row lengths" % text) from None
    else:
        rows = [int(v) for v in text]
    while rows and rows[-1] == 0:
        rows.pop()
    if any(r < 0 for r in rows) or any(a < b for a, b in zip(rows, rows[1:])):
        raise InvalidPosition("invalid position %r: rows must be non-negative and not increase" % (text,))
    if not rows:
        raise InvalidPosition("invalid position %r: the empty board is not a position" % (text,))
    if len(rows) > MAX_ROWS and rows[0] > MAX_ROWS:
        raise InvalidPosition("invalid position %r: more than %d rows and columns" % (text, MAX_ROWS))
    return rows


def _transpose(rows):
    return [sum(1 for r in rows if r > j) for j in range(rows[0])] if rows else []


class FewRowTables:
    """An open few-row directory. `query`, `outcome`, `winning_moves` as
    the level tables' `Tables` has them (no Grundy values)."""

    def __init__(self, directory, against=None):
        self.directory = directory
        mpath = os.path.join(directory, MANIFEST)
        try:
            with open(mpath, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raw = None
        except OSError as e:
            raise TableError("%s: %s" % (mpath, e.strerror or e)) from None
        if against is not None:
            with open(against, "rb") as f:
                want = f.read()
            parse_manifest(against, want)
            if raw != want:
                raise TableError("%s: manifest.json differs from the published manifest %s: these are not the published tables" % (directory, against))
        if raw is None:
            self._open_legacy()
        else:
            self.manifest = parse_manifest(mpath, raw)
            self._open_blocked()
        self._terms = _rank_terms(self.k - 1, self.n)

    def _open_blocked(self):
        m = self.manifest
        self.rows, self.cols = m["universe"]["rows"], m["universe"]["cols"]
        self.k, self.n = min(self.rows, self.cols), max(self.rows, self.cols)
        path = self.path = os.path.join(self.directory, TABLE)
        entry = m["files"][TABLE]
        try:
            self._file = open(path, "rb")
        except OSError as e:
            raise TableError("%s: %s" % (path, e.strerror or e)) from None
        size = os.fstat(self._file.fileno()).st_size
        if size != entry["bytes"]:
            raise corrupt(path, "%d bytes, manifest.json says %d" % (size, entry["bytes"]))
        head = self._pread(0, entry["head_bytes"])
        if hashlib.sha256(head).hexdigest() != entry["head_sha256"]:
            raise corrupt(path, "damaged header (its SHA-256 differs from manifest.json)")
        magic, version, zero, k, n, entries, block_bytes, block_entries, blocks, file_len = _FIELDS.unpack_from(head)
        if magic != b"CHOMPFR2" or version != VERSION or zero != 0:
            raise corrupt(path, "not a few-row table of version %d" % VERSION)
        if block_bytes != len(head) or zlib.crc32(head[:-4]) != struct.unpack_from("<I", head, len(head) - 4)[0]:
            raise corrupt(path, "damaged header (its CRC-32 does not match)")
        if any(head[_FIELDS.size:-4]):
            raise corrupt(path, "a header whose padding is not zero")
        want_blocks = -(-entries // block_entries) if block_entries else 0
        last = entries - (want_blocks - 1) * block_entries
        if ((k, n) != (self.k, self.n) or entries != m["prefixes"] or block_entries != (block_bytes - 4) // 2
                or blocks != want_blocks or file_len != block_bytes * blocks + 2 * last + 4 or file_len != size):
            raise corrupt(path, "header fields that do not describe the table of manifest.json")
        self.entries, self.block_bytes, self.block_entries, self.blocks = entries, block_bytes, block_entries, blocks
        self.legacy = False

    def _open_legacy(self):
        path = self.path = os.path.join(self.directory, LEGACY_TABLE)
        try:
            self._file = open(path, "rb")
        except OSError:
            raise TableError("%s: no manifest.json and no %s; not a few-row directory" % (self.directory, LEGACY_TABLE)) from None
        size = os.fstat(self._file.fileno()).st_size
        header = self._pread(0, 28)
        if len(header) < 28 or header[:8] != b"CHOMPFR1":
            raise corrupt(path, "not a few-row table")
        k, n, nxt, entries = struct.unpack_from("<IIIQ", header, 8)
        if not (1 <= k <= min(n, MAX_ROWS) or k == n == 1) or n > MAX_COLS or entries != math.comb(n + k - 1, k - 1) or size != 28 + 2 * entries + 4:
            raise corrupt(path, "a header that does not describe a table of its box, or a file of another length")
        if nxt != max(k - 2, 0) * n + 1:
            raise corrupt(path, "an unfinished table (a checkpoint: its run has not ended)")
        crc = 0
        self._file.seek(0)
        left = size - 4
        while left > 0:
            chunk = self._file.read(min(left, 1 << 22))
            if not chunk:
                raise corrupt(path, "cut short")
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
        if struct.unpack("<I", self._file.read(4))[0] != crc:
            raise corrupt(path, "damaged (its CRC-32 does not match)")
        self.manifest = None
        self.rows, self.cols, self.k, self.n, self.entries = k, n, k, n, entries
        self.legacy = True

    def _pread(self, offset, length):
        self._file.seek(offset)
        return self._file.read(length)

    def _place(self, rows):
        """(prefix rank, last row) of the position, in either orientation."""
        k, n = self.k, self.n

        def fits(r):
            return len(r) <= k and r[0] <= n

        q = rows if fits(rows) else _transpose(rows)
        if not fits(q):
            raise NotInTables("the position does not fit the %dx%d box in either orientation" % (self.rows, self.cols))
        full = list(q) + [0] * (k - len(q))
        rank = sum(self._terms[i][v] for i, v in enumerate(full[:k - 1]))
        return rank, full[k - 1]

    def _entries(self, ranks):
        """The entries of these prefix ranks, each block read once and checked."""
        out = [None] * len(ranks)
        if self.legacy:
            for i, r in enumerate(ranks):
                out[i] = struct.unpack("<H", self._pread(28 + 2 * r, 2))[0]
            return out
        loaded, data = None, b""
        for i in sorted(range(len(ranks)), key=ranks.__getitem__):
            b, j = divmod(ranks[i], self.block_entries)
            if b != loaded:
                count = min(self.block_entries, self.entries - b * self.block_entries)
                raw = self._pread(self.block_bytes * (1 + b), 2 * count + 4)
                data = raw[:-4]
                if len(raw) != 2 * count + 4 or zlib.crc32(struct.pack("<Q", b) + data) != struct.unpack_from("<I", raw, 2 * count)[0]:
                    raise corrupt(self.path, "damaged block %d of %d (its CRC-32 does not match): nothing is answered from it" % (b, self.blocks))
                loaded = b
            out[i] = struct.unpack_from("<H", data, 2 * j)[0]
        return out

    def answer(self, pos):
        """(is_loss, winning moves) of a position, checked against itself."""
        rows = parse_rows(pos)
        placed = [self._place(rows)]
        moves = []
        for a, length in enumerate(rows):
            for b in range(length):
                if (a, b) == (0, 0):
                    continue
                child = [v if i < a else min(v, b) for i, v in enumerate(rows)]
                while child and child[-1] == 0:
                    child.pop()
                placed.append(self._place(child))
                moves.append([a, b])
        entries = self._entries([p[0] for p in placed])
        lost = [e != NONE and e == p[1] for e, p in zip(entries, placed)]
        winning = [mv for mv, l in zip(moves, lost[1:]) if l]
        if lost[0] != (not winning):
            raise corrupt(self.directory, "the table contradicts itself at %s" % " ".join(map(str, rows)))
        return lost[0], winning

    def outcome(self, pos):
        return "loss" if self.answer(pos)[0] else "win"

    def winning_moves(self, pos):
        return self.answer(pos)[1]

    def query(self, pos):
        """The dict of `chomp query --json` on a few-row directory."""
        rows = parse_rows(pos)
        loss, winning = self.answer(rows)
        return {
            "position": rows,
            "tiles": sum(rows),
            "outcome": "loss" if loss else "win",
            "grundy": None,
            "grundy_normal": None,
            "winning_moves": winning,
            "engine": "few-row",
            "box": "%dx%d" % (self.rows, self.cols),
        }
