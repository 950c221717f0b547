"""Format 3 tables (FORMAT.md section 17): the head, index pages and blocks,
each checked along the chain manifest -> head -> page -> block before any
answer is read from them."""

import hashlib
import itertools
import re
import struct
import zlib

from .errors import corrupt
from .tablefile import MAGIC, zstd_one_frame

VERSION_BLOCKED = 3
FIXED_LEN = 88
# magic, version, kind, tiles, max_rows, max_cols, max_tiles, block_size,
# positions, losses, first, shard, shards, blocks, page_entries, file_len,
# digests_crc32, header_crc32 (little-endian)
FIXED = struct.Struct("<8sHHIIIIIQQQIIIIQII")
assert FIXED.size == FIXED_LEN
DIGEST_LEN = 16
ENTRY = struct.Struct("<QII16s")
ENTRY_LEN = ENTRY.size
assert ENTRY_LEN == 32
MAX_BLOCK = 1 << 16
MAX_PAGE_ENTRIES = 1 << 16
KINDS = {1: "losses", 2: "grundy"}
# A gap of a loss block: at most two continuation bytes, then a final byte.
_GAP = re.compile(rb"[\x80-\xff]{0,2}[\x00-\x7f]")
_GAPS = re.compile(rb"(?:[\x80-\xff]{0,2}[\x00-\x7f])*")


def _gap(token):
    v = 0
    for i, byte in enumerate(token):
        v |= (byte & 0x7F) << (7 * i)
    return v


def digest(data):
    """A block or page digest: the first 16 bytes of the SHA-256 of `data`."""
    return hashlib.sha256(data).digest()[:DIGEST_LEN]


def head_length(path, fixed):
    """The length of the head whose fixed part is `fixed` (at least 88 bytes)."""
    h = parse_fixed(path, fixed)
    return FIXED_LEN + DIGEST_LEN * h["pages"]


def parse_fixed(path, data):
    """Checks the fixed 88 bytes of a format 3 table; returns them as a dict."""
    if len(data) < FIXED_LEN:
        raise corrupt(path, "truncated: %d bytes, shorter than the %d-byte header" % (len(data), FIXED_LEN))
    (magic, version, kind, tiles, max_rows, max_cols, max_tiles, block_size, positions, losses, first, shard, shards, blocks, page_entries, file_len, digests_crc, header_crc) = FIXED.unpack_from(data, 0)
    if magic != MAGIC:
        raise corrupt(path, "not a chomp table (wrong magic bytes)")
    if version != VERSION_BLOCKED:
        raise corrupt(path, "table format version %d, expected %d" % (version, VERSION_BLOCKED))
    if zlib.crc32(bytes(data[: FIXED_LEN - 4])) & 0xFFFFFFFF != header_crc:
        raise corrupt(path, "header checksum mismatch")
    if kind not in KINDS:
        raise corrupt(path, "unknown table kind %d" % kind)
    if shard >= shards:
        raise corrupt(path, "shard index beyond the level's shard count")
    if not 1 <= block_size <= MAX_BLOCK:
        raise corrupt(path, "block size not in 1 ..= 65536")
    if not 1 <= positions <= 1 << 32:
        raise corrupt(path, "positions not in 1 ..= 2^32")
    if losses > positions:
        raise corrupt(path, "more losses than positions")
    if blocks != (positions + block_size - 1) // block_size:
        raise corrupt(path, "block count does not match positions and block size")
    if not 1 <= page_entries <= MAX_PAGE_ENTRIES:
        raise corrupt(path, "entries per index page not in 1 ..= 65536")
    pages = (blocks + page_entries - 1) // page_entries
    data_start = FIXED_LEN + DIGEST_LEN * pages + ENTRY_LEN * blocks
    if file_len < data_start:
        raise corrupt(path, "file length shorter than its head and index")
    return {
        "kind": KINDS[kind],
        "version": version,
        "tiles": tiles,
        "max_rows": max_rows,
        "max_cols": max_cols,
        "max_tiles": max_tiles,
        "block_size": block_size,
        "positions": positions,
        "losses": losses,
        "first": first,
        "shard": shard,
        "shards": shards,
        "blocks": blocks,
        "page_entries": page_entries,
        "pages": pages,
        "file_len": file_len,
        "digests_crc32": digests_crc,
        "data_start": data_start,
    }


class Head:
    """The checked head of a format 3 table: header fields and page digests."""

    def __init__(self, path, data):
        h = parse_fixed(path, data)
        end = FIXED_LEN + DIGEST_LEN * h["pages"]
        if len(data) < end:
            raise corrupt(path, "truncated: %d bytes, shorter than the %d-byte head" % (len(data), end))
        digests = bytes(data[FIXED_LEN:end])
        if zlib.crc32(digests) & 0xFFFFFFFF != h["digests_crc32"]:
            raise corrupt(path, "index page digests checksum mismatch")
        self.path = path
        self.header = h
        self.length = end
        self.page_digests = [digests[i : i + DIGEST_LEN] for i in range(0, len(digests), DIGEST_LEN)]

    def block_positions(self, b):
        h = self.header
        return min(h["block_size"], h["positions"] - b * h["block_size"])

    def page_span(self, p):
        """(offset, length) of index page `p` in the file."""
        h = self.header
        first = p * h["page_entries"]
        entries = min(h["page_entries"], h["blocks"] - first)
        return self.length + first * ENTRY_LEN, entries * ENTRY_LEN

    def parse_page(self, p, data):
        """Checks index page `p` against its digest; returns its entries as
        (offset, length, count, digest) tuples."""
        h = self.header
        off, length = self.page_span(p)
        if len(data) != length or digest(data) != self.page_digests[p]:
            raise corrupt(self.path, "index page %d: digest mismatch" % p)
        first_block = p * h["page_entries"]
        entries = list(ENTRY.iter_unpack(data))
        data_start, file_len, last_block = h["data_start"], h["file_len"], h["blocks"] - 1
        expected = data_start if p == 0 else entries[0][0]
        for i, (offset, length, count, _) in enumerate(entries):
            b = first_block + i
            end = offset + length
            if offset != expected or offset < data_start or end > file_len or (b == last_block and end != file_len) or count > self.block_positions(b):
                raise corrupt(self.path, "index page %d: entry of block %d does not fit the file" % (p, b))
            expected = end
        return entries

    def _frame(self, b, entry, data):
        if len(data) != entry[1] or digest(data) != entry[3]:
            raise corrupt(self.path, "block %d: digest mismatch" % b)

    def loss_block(self, b, entry, data):
        """The loss ranks of block `b` (relative to the block), increasing."""
        self._frame(b, entry, data)
        count = entry[2]
        raw = zstd_one_frame(data, 3 * count, self.path, "block %d" % b) if count else zstd_one_frame(data, 0, self.path, "block %d" % b)
        positions = self.block_positions(b)
        if _GAPS.fullmatch(raw):
            # Every gap well formed (at most 3 bytes): decode them at C speed where one byte each.
            tokens = _GAP.findall(raw)
            gaps = raw if len(tokens) == len(raw) else [t[0] if len(t) == 1 else _gap(t) for t in tokens]
            out = [s + i for i, s in enumerate(itertools.accumulate(gaps))]
            if out and out[-1] >= positions:
                raise corrupt(self.path, "block %d: a loss rank lies beyond the block" % b)
        else:
            out = self._slow_gaps(b, raw, positions)
        if len(out) != count:
            raise corrupt(self.path, "block %d: holds %d losses, its entry says %d" % (b, len(out), count))
        return out

    def _slow_gaps(self, b, raw, positions):
        """Decodes gaps one byte at a time, to say precisely what is wrong."""
        out = []
        nxt = 0
        i = 0
        n = len(raw)
        while i < n:
            gap = 0
            shift = 0
            while True:
                if i >= n:
                    raise corrupt(self.path, "block %d: truncated gap" % b)
                if shift > 14:
                    raise corrupt(self.path, "block %d: gap longer than 3 bytes" % b)
                byte = raw[i]
                i += 1
                gap |= (byte & 0x7F) << shift
                shift += 7
                if byte < 0x80:
                    break
            rank = nxt + gap
            if rank >= positions:
                raise corrupt(self.path, "block %d: a loss rank lies beyond the block" % b)
            out.append(rank)
            nxt = rank + 1
        return out

    def grundy_block(self, b, entry, data):
        """The values of block `b` (bytes)."""
        self._frame(b, entry, data)
        want = self.block_positions(b)
        raw = zstd_one_frame(data, want, self.path, "block %d" % b)
        if len(raw) != want:
            raise corrupt(self.path, "block %d: decodes to %d values, expected %d" % (b, len(raw), want))
        if raw.count(0) != entry[2]:
            raise corrupt(self.path, "block %d: holds %d zero values, its entry says %d" % (b, raw.count(0), entry[2]))
        return raw


def read_whole(path, data):
    """Checks a whole format 3 table image (no manifest to compare with) and
    returns (header dict, loss ranks or values)."""
    head = Head(path, data)
    h = head.header
    if h["file_len"] != len(data):
        raise corrupt(path, "truncated or padded: header announces %d bytes, file has %d" % (h["file_len"], len(data)))
    entries = []
    for p in range(h["pages"]):
        off, length = head.page_span(p)
        entries.extend(head.parse_page(p, data[off : off + length]))
    if any(b[0] != a[0] + a[1] for a, b in zip(entries, entries[1:])):
        raise corrupt(path, "blocks are not contiguous across index pages")
    if sum(e[2] for e in entries) != h["losses"]:
        raise corrupt(path, "blocks hold %d losses, header says %d" % (sum(e[2] for e in entries), h["losses"]))
    out = []
    for b, e in enumerate(entries):
        frame = data[e[0] : e[0] + e[1]]
        if h["kind"] == "losses":
            start = b * h["block_size"]
            out.extend(start + r for r in head.loss_block(b, e, frame))
        else:
            out.extend(head.grundy_block(b, e, frame))
    return h, out
