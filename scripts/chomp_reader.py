#!/usr/bin/env python3
"""Independent reader for chomp-tables table directories (format version 1).

Written from FORMAT.md alone: it shares no code with the Rust crate. It needs
Python 3.8+ and the PyPI package `zstandard`; the roaring bitmap format is
decoded here, without a roaring library.

    python3 scripts/chomp_reader.py TABLE_DIR "3 2 1" [--json]
    python3 scripts/chomp_reader.py TABLE_DIR --batch POSITIONS.txt
    python3 scripts/chomp_reader.py --dump TABLE_FILE

A query prints one JSON object: position, tiles, outcome ("win"/"loss"),
grundy (misere value, or null where the tables hold none), grundy_normal
(grundy + 1, or null) and winning_moves ([row, col] cells, sorted). With
--json it is printed on one line, otherwise one field per line.

--batch reads one position per line (blank lines and lines starting with '#'
are skipped; '-' reads standard input) and prints one JSON object per line; a
position that is malformed or outside the tables prints
{"position": TEXT, "error": MESSAGE} and the exit status becomes 1.

--dump checks one table file on its own (magic, version, checksums,
structure; there is no manifest to compare with) and prints its header and
contents (loss ranks or Grundy values) as JSON.

Every file opened is checked: the manifest's version, fields, own checksum and
canonical form; the SHA-256 and size the manifest lists; magic bytes, version,
header and payload CRC-32, every header field against the manifest, the zstd
frames and the roaring structure. Answers
are cross-checked too (a Grundy value is 0 exactly for losses; a position is a
loss exactly when it has no winning move). Damaged or mismatched files and
positions outside the tables print one line on stderr and exit with status 1.
"""

import argparse
import bisect
import hashlib
import json
import os
import struct
import sys
import zlib
from array import array

try:
    import zstandard
except ImportError:  # reported in main(), so that --help still works
    zstandard = None

FORMAT_NAME = "chomp-tables"
VERSION = 1
MAGIC = b"CHOMPTBL"
HEADER_LEN = 64
# magic, version, kind, tiles, max_rows, max_cols, max_tiles, block_size,
# positions, losses, payload_len, payload_crc32, header_crc32 (little-endian)
HEADER = struct.Struct("<8sHHIIIIIQQQII")
assert HEADER.size == HEADER_LEN
KIND_LOSSES = 1
KIND_GRUNDY = 2
KIND_NAMES = {KIND_LOSSES: "losses", KIND_GRUNDY: "grundy"}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ROARING_NO_RUNS = 12346
ROARING_RUNS = 12347
ROARING_NO_OFFSET_THRESHOLD = 4
ARRAY_LIMIT = 4096
BITMAP_BYTES = 8192


class TableFileError(Exception):
    """A file of the table directory is missing, unreadable, damaged or mismatched."""


class QuestionError(Exception):
    """The position asked about is malformed or not covered by the tables."""


def corrupt(path, what):
    return TableFileError("%s: %s" % (path, what))


# ---------------------------------------------------------------- zstd frames


def zstd_one_frame(data, limit, path, what):
    """Decodes `data` as exactly one zstd frame of at most `limit` bytes."""
    if not data.startswith(ZSTD_MAGIC):
        raise corrupt(path, "%s: not a zstd frame" % what)
    dobj = zstandard.ZstdDecompressor().decompressobj()
    parts = []
    total = 0
    step = 64  # a few bytes of input cannot expand past a few MiB: bounded memory
    pos = 0
    try:
        while pos < len(data) and not dobj.eof:
            chunk = dobj.decompress(data[pos : pos + step])
            pos += step
            total += len(chunk)
            if total > limit:
                raise corrupt(path, "%s: zstd frame decodes to more than %d bytes" % (what, limit))
            parts.append(chunk)
    except zstandard.ZstdError as e:
        raise corrupt(path, "%s: bad zstd frame: %s" % (what, e))
    if not dobj.eof:
        raise corrupt(path, "%s: zstd frame truncated" % what)
    if dobj.unused_data or pos < len(data):
        raise corrupt(path, "%s: bytes after the zstd frame" % what)
    return b"".join(parts)


# -------------------------------------------------------------- roaring bitmap


class RoaringSet:
    """A decoded roaring bitmap (portable serialization), for membership tests."""

    def __init__(self, containers):
        # containers: list of (key, kind, data) with kind in "array", "bitmap", "run"
        self.keys = [c[0] for c in containers]
        self.containers = containers
        self.cardinality = 0
        self.maximum = None

    def __contains__(self, x):
        key, low = x >> 16, x & 0xFFFF
        i = bisect.bisect_left(self.keys, key)
        if i == len(self.keys) or self.keys[i] != key:
            return False
        _, kind, data = self.containers[i]
        if kind == "array":
            j = bisect.bisect_left(data, low)
            return j < len(data) and data[j] == low
        if kind == "bitmap":
            return bool(data[low >> 3] >> (low & 7) & 1)
        starts, ends = data
        j = bisect.bisect_right(starts, low) - 1
        return j >= 0 and low <= ends[j]

    def __iter__(self):
        for key, kind, data in self.containers:
            base = key << 16
            if kind == "array":
                for v in data:
                    yield base | v
            elif kind == "bitmap":
                for byte_index, byte in enumerate(data):
                    while byte:
                        bit = (byte & -byte).bit_length() - 1
                        yield base | (byte_index << 3) | bit
                        byte &= byte - 1
            else:
                for s, e in zip(*data):
                    for v in range(s, e + 1):
                        yield base | v


def popcount(bs):
    return bin(int.from_bytes(bs, "little")).count("1")


def decode_roaring(buf, path):
    """Decodes and checks a roaring bitmap in the portable serialization."""

    def need(pos, n, what):
        if pos + n > len(buf):
            raise corrupt(path, "roaring bitmap truncated in %s" % what)

    need(0, 4, "cookie")
    (cookie,) = struct.unpack_from("<I", buf, 0)
    if cookie == ROARING_NO_RUNS:
        need(4, 4, "container count")
        (size,) = struct.unpack_from("<I", buf, 4)
        pos = 8
        run_flags = None
        has_offsets = True
    elif cookie & 0xFFFF == ROARING_RUNS:
        size = (cookie >> 16) + 1
        n = (size + 7) // 8
        need(4, n, "run flags")
        run_flags = buf[4 : 4 + n]
        pos = 4 + n
        has_offsets = size >= ROARING_NO_OFFSET_THRESHOLD
    else:
        raise corrupt(path, "roaring bitmap: unknown cookie %d" % cookie)
    if size > 65536:
        raise corrupt(path, "roaring bitmap: %d containers, more than 65536" % size)
    need(pos, 4 * size, "descriptive header")
    desc = struct.unpack_from("<%dH" % (2 * size), buf, pos)
    pos += 4 * size
    offsets = None
    if has_offsets:
        need(pos, 4 * size, "offset header")
        offsets = struct.unpack_from("<%dI" % size, buf, pos)
        pos += 4 * size
    containers = []
    total = 0
    prev_key = -1
    for i in range(size):
        key, card = desc[2 * i], desc[2 * i + 1] + 1
        if key <= prev_key:
            raise corrupt(path, "roaring bitmap: container keys not increasing")
        prev_key = key
        if offsets is not None and offsets[i] != pos:
            raise corrupt(path, "roaring bitmap: container %d at byte %d, offset header says %d" % (i, pos, offsets[i]))
        is_run = run_flags is not None and run_flags[i // 8] >> (i % 8) & 1
        if is_run:
            need(pos, 2, "run container")
            (nruns,) = struct.unpack_from("<H", buf, pos)
            pos += 2
            need(pos, 4 * nruns, "run container")
            pairs = struct.unpack_from("<%dH" % (2 * nruns), buf, pos)
            pos += 4 * nruns
            starts, ends = [], []
            count = 0
            prev_end = -2
            for r in range(nruns):
                s, length_minus_one = pairs[2 * r], pairs[2 * r + 1]
                e = s + length_minus_one
                if e > 0xFFFF or s <= prev_end + 1:
                    raise corrupt(path, "roaring bitmap: run container %d malformed" % i)
                starts.append(s)
                ends.append(e)
                count += length_minus_one + 1
                prev_end = e
            if count != card:
                raise corrupt(path, "roaring bitmap: run container %d holds %d values, header says %d" % (i, count, card))
            data = (starts, ends)
            kind = "run"
            top = ends[-1] if ends else None
        elif card <= ARRAY_LIMIT:
            need(pos, 2 * card, "array container")
            values = array("H")
            values.frombytes(buf[pos : pos + 2 * card])
            if sys.byteorder != "little":
                values.byteswap()
            pos += 2 * card
            as_list = values.tolist()
            if len(set(as_list)) != card or as_list != sorted(as_list):
                raise corrupt(path, "roaring bitmap: array container %d not strictly increasing" % i)
            data, kind, top = as_list, "array", as_list[-1]
        else:
            need(pos, BITMAP_BYTES, "bitmap container")
            bits = bytes(buf[pos : pos + BITMAP_BYTES])
            pos += BITMAP_BYTES
            if popcount(bits) != card:
                raise corrupt(path, "roaring bitmap: bitmap container %d cardinality mismatch" % i)
            last = max(j for j, b in enumerate(bits) if b)
            data, kind, top = bits, "bitmap", last * 8 + bits[last].bit_length() - 1
        total += card
        containers.append((key, kind, data))
        if top is not None:
            maximum = (key << 16) | top
    if pos != len(buf):
        raise corrupt(path, "roaring bitmap: %d bytes after its last container" % (len(buf) - pos))
    result = RoaringSet(containers)
    result.cardinality = total
    result.maximum = maximum if containers else None
    return result


# ---------------------------------------------------------------- table files


def parse_table(path, data, expect_kind=None):
    """Checks a table image (magic, version, CRCs, sizes); returns (header dict, payload)."""
    if len(data) < HEADER_LEN:
        raise corrupt(path, "truncated: %d bytes, shorter than the 64-byte header" % len(data))
    fields = HEADER.unpack_from(data, 0)
    (magic, version, kind, tiles, max_rows, max_cols, max_tiles, block_size, positions, losses, payload_len, payload_crc, header_crc) = fields
    if magic != MAGIC:
        raise corrupt(path, "not a chomp table (wrong magic bytes)")
    if version != VERSION:
        raise corrupt(path, "table format version %d, this reader knows only version %d" % (version, VERSION))
    if zlib.crc32(data[0:60]) & 0xFFFFFFFF != header_crc:
        raise corrupt(path, "header checksum mismatch")
    if kind not in KIND_NAMES:
        raise corrupt(path, "unknown table kind %d" % kind)
    if expect_kind is not None and kind != expect_kind:
        raise corrupt(path, "expected a %s table, found a %s table" % (KIND_NAMES[expect_kind], KIND_NAMES[kind]))
    if payload_len != len(data) - HEADER_LEN:
        raise corrupt(path, "truncated or padded: header announces %d payload bytes, file has %d" % (payload_len, len(data) - HEADER_LEN))
    payload = data[HEADER_LEN:]
    if zlib.crc32(payload) & 0xFFFFFFFF != payload_crc:
        raise corrupt(path, "payload checksum mismatch")
    if positions == 0 or positions > 0xFFFFFFFF:
        raise corrupt(path, "level size %d out of range" % positions)
    if losses > positions:
        raise corrupt(path, "more losses than positions")
    if kind == KIND_LOSSES and block_size != 0:
        raise corrupt(path, "loss table with a non-zero block size")
    if kind == KIND_GRUNDY and block_size == 0:
        raise corrupt(path, "Grundy table with block size 0")
    header = {
        "kind": KIND_NAMES[kind],
        "version": version,
        "tiles": tiles,
        "max_rows": max_rows,
        "max_cols": max_cols,
        "max_tiles": max_tiles,
        "block_size": block_size,
        "positions": positions,
        "losses": losses,
        "payload_len": payload_len,
    }
    return header, payload


def loss_payload_bound(positions):
    """Largest decompressed loss payload accepted (FORMAT.md section 10, item 8).

    The bound of the Rust reader: it holds every serialization whose containers
    take at most 8194 bytes each (arrays, bitmaps, runs of up to 2048 runs) with
    the cookie, run flags and headers."""
    return (positions // 65536 + 1) * 8208 + 64


def decode_losses(path, header, payload):
    positions = header["positions"]
    raw = zstd_one_frame(payload, loss_payload_bound(positions), path, "loss payload")
    bitmap = decode_roaring(raw, path)
    if bitmap.cardinality != header["losses"]:
        raise corrupt(path, "holds %d losses, header says %d" % (bitmap.cardinality, header["losses"]))
    if bitmap.maximum is not None and bitmap.maximum >= positions:
        raise corrupt(path, "a loss rank lies beyond the level")
    return bitmap


class GrundyTable:
    """A checked Grundy table; blocks are decoded on demand."""

    def __init__(self, path, header, payload):
        self.path = path
        self.header = header
        self.payload = payload
        bs = header["block_size"]
        positions = header["positions"]
        self.blocks = (positions + bs - 1) // bs
        index_len = 8 * (self.blocks + 1)
        if len(payload) < index_len:
            raise corrupt(path, "block index truncated")
        offs = struct.unpack_from("<%dQ" % (self.blocks + 1), payload, 0)
        if offs[0] != index_len or offs[-1] != len(payload) or any(a > b for a, b in zip(offs, offs[1:])):
            raise corrupt(path, "inconsistent block index")
        self.offsets = offs
        self.cache = {}

    def block(self, b):
        if b not in self.cache:
            bs = self.header["block_size"]
            want = min(bs, self.header["positions"] - b * bs)
            frame = self.payload[self.offsets[b] : self.offsets[b + 1]]
            raw = zstd_one_frame(frame, want, self.path, "block %d" % b)
            if len(raw) != want:
                raise corrupt(self.path, "block %d decodes to %d bytes, expected %d" % (b, len(raw), want))
            self.cache[b] = raw
        return self.cache[b]

    def value(self, rank):
        bs = self.header["block_size"]
        return self.block(rank // bs)[rank % bs]

    def all_values(self):
        out = b"".join(self.block(b) for b in range(self.blocks))
        zeros = out.count(0)
        if zeros != self.header["losses"]:
            raise corrupt(self.path, "holds %d zero values, header says %d losses" % (zeros, self.header["losses"]))
        return out


# -------------------------------------------------------------------- ranking


class Ranking:
    """Ranks positions within a level: lexicographic order of row lengths."""

    def __init__(self, rows, cols, top):
        self.top = top
        # A row bound of at least `top` never binds: treat it as unbounded.
        self.rows = rows if rows is not None and rows < top else None
        self.max_part = min(cols, top) if cols is not None else top
        planes = 1 if self.rows is None else self.rows + 1
        sdim, mdim = top + 1, self.max_part + 1
        self.sdim, self.mdim = sdim, mdim
        t = [0] * (planes * sdim * mdim)
        for p in range(planes):
            for s in range(sdim):
                for m in range(mdim):
                    if s == 0:
                        v = 1
                    elif m == 0 or (self.rows is not None and p == 0):
                        v = 0
                    else:
                        v = t[(p * sdim + s) * mdim + m - 1]
                        if s >= m:
                            below = p - 1 if self.rows is not None else 0
                            v += t[(below * sdim + s - m) * mdim + m]
                    t[(p * sdim + s) * mdim + m] = v
        self.table = t

    def q(self, s, r, m):
        """Partitions of s into at most r parts (r None: any number), each at most m."""
        if s < 0:
            return 0
        m = min(m, self.max_part)
        if self.rows is None:
            plane = 0
        else:
            plane = min(r, self.rows) if r is not None else self.rows
        return self.table[(plane * self.sdim + s) * self.mdim + m]

    def size(self, n):
        if n < 1 or n > self.top:
            return 0
        return self.q(n, self.rows, self.max_part)

    def rank(self, rows):
        suffix = sum(rows)
        r = 0
        for i, v in enumerate(rows):
            r += self.q(suffix, None if self.rows is None else self.rows - i, v - 1)
            suffix -= v
        return r


# ------------------------------------------------------------ table directory


def check_int(v, what, path, nullable=False):
    if v is None and nullable:
        return
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise corrupt(path, "invalid manifest: %s is not a non-negative integer" % what)


MANIFEST_FIELDS = (
    "format",
    "format_version",
    "tool_version",
    "universe",
    "grundy_max_tiles",
    "levels_complete",
    "complete",
    "levels",
    "files",
    "checksum",
)
UNIVERSE_FIELDS = ("rows", "cols", "tiles")
LEVEL_FIELDS = ("tiles", "positions", "losses")
LEVEL_FIELDS_GRUNDY = LEVEL_FIELDS + ("grundy_histogram",)
FILE_FIELDS = ("bytes", "sha256")


def plain_relative_name(name):
    """Whether a name listed in a manifest stays inside the table directory:
    components separated by '/', none empty, '.' or '..', and no '\\' or ':'
    (so not absolute on any system). FORMAT.md section 2."""
    if not isinstance(name, str) or not name or "\\" in name or ":" in name or "\0" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def canonical_manifest(m, checksum):
    """The canonical text of a manifest (key order as parsed) with `checksum` as given."""
    c = dict(m)
    c["checksum"] = checksum
    return json.dumps(c, indent=2, ensure_ascii=False) + "\n"


class Tables:
    def __init__(self, directory):
        self.dir = directory
        path = os.path.join(directory, "manifest.json")
        self.manifest_path = path
        try:
            with open(path, "rb") as f:
                text = f.read()
        except FileNotFoundError:
            raise TableFileError("%s: no manifest.json; not a chomp table directory" % directory)
        except OSError as e:
            raise TableFileError("%s: %s" % (path, e.strerror or e))
        if b"\r" in text:
            raise corrupt(path, "manifest not in canonical form: it holds a carriage return (CRLF line endings?)")
        try:
            m = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise corrupt(path, "invalid manifest: %s" % e)
        self.manifest = m
        self._check_manifest(m, path, text)
        u = m["universe"]
        self.rows_bound, self.cols_bound, self.tiles_bound = u["rows"], u["cols"], u["tiles"]
        top = self.tiles_bound if self.tiles_bound is not None else 1 << 62
        if self.rows_bound is not None and self.cols_bound is not None:
            top = min(top, self.rows_bound * self.cols_bound)
        if top > 1024:
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
        self.losses = {}
        self.grundy = {}

    @staticmethod
    def _check_manifest(m, path, text):
        if not isinstance(m, dict):
            raise corrupt(path, "invalid manifest: not a JSON object")
        # The format and its version first: a newer manifest may differ in anything else.
        if m.get("format") != FORMAT_NAME:
            raise corrupt(path, "invalid manifest: format is %r, not %r" % (m.get("format"), FORMAT_NAME))
        if m.get("format_version") != VERSION or isinstance(m.get("format_version"), bool):
            raise corrupt(path, "format version %r, this reader knows only version %d" % (m.get("format_version"), VERSION))
        if set(m) != set(MANIFEST_FIELDS):
            missing = [k for k in MANIFEST_FIELDS if k not in m]
            extra = sorted(k for k in m if k not in MANIFEST_FIELDS)
            raise corrupt(path, "invalid manifest: missing fields %s, unknown fields %s" % (missing, extra))
        # The canonical text below keeps the parsed key order, so the fixed
        # order of FORMAT.md section 3 is checked here.
        if tuple(m) != MANIFEST_FIELDS:
            raise corrupt(path, "manifest not in canonical form: fields out of order")
        # The checksum covers the values; byte equality with the canonical text covers the rest.
        if not isinstance(m["checksum"], str):
            raise corrupt(path, "invalid manifest: checksum is not a string")
        if hashlib.sha256(canonical_manifest(m, "").encode("utf-8")).hexdigest() != m["checksum"]:
            raise corrupt(path, "manifest checksum mismatch (damaged or edited)")
        if canonical_manifest(m, m["checksum"]).encode("utf-8") != text:
            raise corrupt(path, "manifest not in canonical form (damaged or edited)")
        if not isinstance(m["tool_version"], str) or not isinstance(m["complete"], bool):
            raise corrupt(path, "invalid manifest: tool_version or complete has the wrong type")
        u = m["universe"]
        if not isinstance(u, dict) or set(u) != {"rows", "cols", "tiles"}:
            raise corrupt(path, "invalid manifest: universe must hold rows, cols and tiles")
        if tuple(u) != UNIVERSE_FIELDS:
            raise corrupt(path, "manifest not in canonical form: universe fields out of order")
        for k in UNIVERSE_FIELDS:
            check_int(u[k], "universe." + k, path, nullable=True)
            if u[k] == 0:
                raise corrupt(path, "invalid manifest: universe.%s is 0" % k)
        if u["tiles"] is None and (u["rows"] is None or u["cols"] is None):
            raise corrupt(path, "invalid manifest: infinite universe")
        check_int(m["grundy_max_tiles"], "grundy_max_tiles", path)
        check_int(m["levels_complete"], "levels_complete", path)
        levels = m["levels"]
        if not isinstance(levels, list) or len(levels) != m["levels_complete"]:
            raise corrupt(path, "invalid manifest: levels must list exactly levels_complete entries")
        for i, level in enumerate(levels):
            if not isinstance(level, dict) or level.get("tiles") != i + 1:
                raise corrupt(path, "invalid manifest: levels[%d] is not level %d" % (i, i + 1))
            if tuple(level) not in (LEVEL_FIELDS, LEVEL_FIELDS_GRUNDY):
                raise corrupt(path, "invalid manifest: levels[%d] has fields %s, not %s[, %s]" % (i, list(level), list(LEVEL_FIELDS), LEVEL_FIELDS_GRUNDY[-1]))
            check_int(level.get("positions"), "levels[%d].positions" % i, path)
            check_int(level.get("losses"), "levels[%d].losses" % i, path)
        files = m["files"]
        if not isinstance(files, dict):
            raise corrupt(path, "invalid manifest: files is not an object")
        if list(files) != sorted(files):
            raise corrupt(path, "manifest not in canonical form: files not sorted by name")
        for rel, entry in files.items():
            # Checked before any file is opened: a listed name never leaves the directory.
            if not plain_relative_name(rel):
                raise corrupt(path, "invalid manifest: files lists %r, not a plain relative name (absolute, or with an empty, '.' or '..' component)" % rel)
            if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
                raise corrupt(path, "invalid manifest: files[%r] lacks sha256" % rel)
            if tuple(entry) != FILE_FIELDS:
                raise corrupt(path, "invalid manifest: files[%r] has fields %s, not %s" % (rel, list(entry), list(FILE_FIELDS)))
            check_int(entry.get("bytes"), "files[%r].bytes" % rel, path)

    def read_listed(self, rel):
        """Reads a file listed in the manifest and checks its size and SHA-256."""
        path = os.path.join(self.dir, *rel.split("/"))
        entry = self.manifest["files"].get(rel)
        if entry is None:
            raise TableFileError("%s: not listed in manifest.json" % path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise TableFileError("%s: %s" % (path, e.strerror or e))
        return path, data, entry

    def check_listed(self, path, data, entry):
        if len(data) != entry["bytes"]:
            raise corrupt(path, "%d bytes, manifest.json says %d" % (len(data), entry["bytes"]))
        if hashlib.sha256(data).hexdigest() != entry["sha256"].lower():
            raise corrupt(path, "SHA-256 differs from manifest.json")

    def open_table(self, kind, n):
        letter, sub = ("L", "losses") if kind == KIND_LOSSES else ("G", "grundy")
        rel = "%s/%s%04d.cht" % (sub, letter, n)
        path, data, entry = self.read_listed(rel)
        header, payload = parse_table(path, data, kind)
        self.check_listed(path, data, entry)
        level = self.manifest["levels"][n - 1]
        want = {
            "tiles": n,
            "max_rows": self.rows_bound or 0,
            "max_cols": self.cols_bound or 0,
            "max_tiles": self.tiles_bound or 0,
            "positions": self.ranking.size(n),
            "losses": level["losses"],
        }
        for k, v in want.items():
            if header[k] != v:
                raise corrupt(path, "header field %s is %d, the manifest implies %d" % (k, header[k], v))
        return path, header, payload

    def loss_set(self, n):
        if n not in self.losses:
            path, header, payload = self.open_table(KIND_LOSSES, n)
            self.losses[n] = decode_losses(path, header, payload)
        return self.losses[n]

    def grundy_table(self, n):
        if n not in self.grundy:
            path, header, payload = self.open_table(KIND_GRUNDY, n)
            self.grundy[n] = GrundyTable(path, header, payload)
        return self.grundy[n]

    def inside(self, rows):
        return (self.rows_bound is None or len(rows) <= self.rows_bound) and (self.cols_bound is None or rows[0] <= self.cols_bound) and sum(rows) <= self.top

    def oriented(self, rows):
        """The rows, or their transpose when only that fits the tables (same outcome and value); None if neither fits."""
        if self.inside(rows):
            return rows
        conj = [sum(1 for r in rows if r > c) for c in range(rows[0])]
        return conj if self.inside(conj) else None

    def locate(self, rows, text):
        n = sum(rows)
        found = self.oriented(rows)
        if found is None:
            raise QuestionError("position %s is outside the tables (%s)" % (text, self.describe()))
        if n > self.levels_complete:
            raise QuestionError("level %d is not in the tables (levels 1..=%d are complete)" % (n, self.levels_complete))
        return n, self.ranking.rank(found)

    def describe(self):
        parts = []
        r, c = self.rows_bound, self.cols_bound
        if r is not None and c is not None:
            parts.append("%dx%d box" % (r, c))
        elif r is not None:
            parts.append("rows <= %d" % r)
        elif c is not None:
            parts.append("cols <= %d" % c)
        if self.tiles_bound is not None:
            parts.append("tiles <= %d" % self.tiles_bound)
        return ", ".join(parts)

    def is_loss(self, rows):
        n = sum(rows)
        return self.ranking.rank(self.oriented(rows)) in self.loss_set(n)

    def query(self, rows, text):
        n, rank = self.locate(rows, text)
        loss = rank in self.loss_set(n)
        grundy = None
        if n <= min(self.grundy_max_tiles, self.levels_complete):
            table = self.grundy_table(n)
            grundy = table.value(rank)
            if (grundy == 0) != loss:
                raise corrupt(table.path, "Grundy value %d of %s contradicts the loss table" % (grundy, text))
        winning = []
        for a, length in enumerate(rows):
            for b in range(length):
                if a == 0 and b == 0:
                    continue
                child = [v if i < a else min(v, b) for i, v in enumerate(rows)]
                child = [v for v in child if v > 0]
                if self.is_loss(child):
                    winning.append([a, b])
        if loss != (not winning):
            raise TableFileError("%s: tables disagree: %s is a %s but has %d winning moves" % (self.dir, text, "loss" if loss else "win", len(winning)))
        winning.sort()
        return {
            "position": list(rows),
            "tiles": n,
            "outcome": "loss" if loss else "win",
            "grundy": grundy,
            "grundy_normal": None if grundy is None else grundy + 1,
            "winning_moves": winning,
        }


def parse_position(text):
    tokens = [t for t in text.replace(",", " ").split() if t]
    if not tokens:
        raise QuestionError('invalid position %r: empty position: a position has at least the poisoned tile, e.g. "1"' % text)
    rows = []
    for i, t in enumerate(tokens):
        if not t.isdigit() or not t.isascii():
            raise QuestionError("invalid position %r: row %d is %r, not a positive integer" % (text, i, t))
        v = int(t)
        if v == 0:
            raise QuestionError("invalid position %r: row %d has length 0" % (text, i))
        if rows and v > rows[-1]:
            raise QuestionError("invalid position %r: row %d (%d) is longer than the row above it (%d)" % (text, i, v, rows[-1]))
        rows.append(v)
    return rows


def dump(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TableFileError("%s: %s" % (path, e.strerror or e))
    header, payload = parse_table(path, data)
    out = dict(header)
    if header["kind"] == "losses":
        out["loss_ranks"] = list(decode_losses(path, header, payload))
    else:
        out["values"] = list(GrundyTable(path, header, payload).all_values())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Read a chomp-tables directory (FORMAT.md, version 1) without the Rust code.")
    ap.add_argument("table_dir", nargs="?", help="the table directory")
    ap.add_argument("position", nargs="?", help='row lengths, top row first: "3 2 1" or "3,2,1"')
    ap.add_argument("--json", action="store_true", help="print the answer on one line")
    ap.add_argument("--batch", metavar="FILE", help="answer one position per line of FILE ('-': stdin), one JSON per line")
    ap.add_argument("--dump", metavar="TABLE_FILE", help="check one table file and print its header and contents")
    args = ap.parse_args(argv)
    prog = "chomp_reader"
    if zstandard is None:
        print("%s: error: the Python module 'zstandard' is missing (pip install zstandard)" % prog, file=sys.stderr)
        return 2
    try:
        if args.dump is not None:
            if args.table_dir is not None:
                ap.error("--dump takes no table directory or position")
            print(json.dumps(dump(args.dump), separators=(",", ":")))
            return 0
        if args.table_dir is None or (args.batch is None) == (args.position is None):
            ap.error("give TABLE_DIR and either a POSITION or --batch FILE")
        tables = Tables(args.table_dir)
        if args.position is not None:
            answer = tables.query(parse_position(args.position), args.position)
            if args.json:
                print(json.dumps(answer, separators=(",", ":")))
            else:
                body = ",\n".join("  %s: %s" % (json.dumps(k), json.dumps(v, separators=(", ", ": "))) for k, v in answer.items())
                print("{\n" + body + "\n}")
            return 0
        if args.batch == "-":
            lines = sys.stdin.read().splitlines()
        else:
            try:
                with open(args.batch, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except OSError as e:
                raise TableFileError("%s: %s" % (args.batch, e.strerror or e))
        status = 0
        out = []
        for line in lines:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                answer = tables.query(parse_position(text), text)
            except QuestionError as e:
                answer = {"position": text, "error": str(e)}
                status = 1
            out.append(json.dumps(answer, separators=(",", ":")))
        sys.stdout.write("".join(s + "\n" for s in out))
        return status
    except (TableFileError, QuestionError) as e:
        print("%s: error: %s" % (prog, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
