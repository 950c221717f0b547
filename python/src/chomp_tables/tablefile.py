"""Table files (FORMAT.md sections 5-7): the 64-byte header, zstd frames,
and the Grundy payload. Loss payloads are read by `roaring`."""

import struct
import zlib

import zstandard

from .errors import corrupt

VERSION = 1
MAGIC = b"CHOMPTBL"
HEADER_LEN = 64
# magic, version, kind, tiles, max_rows, max_cols, max_tiles, block_size,
# positions, losses, payload_len, payload_crc32, header_crc32 (little-endian)
HEADER = struct.Struct("<8sHHIIIIIQQQII")
assert HEADER.size == HEADER_LEN
#: Version 2 (FORMAT.md section 14): shard index, first rank, shard count, then the CRC.
VERSION_SHARDED = 2
HEADER_LEN_SHARDED = 80
HEADER_SHARDED = struct.Struct("<8sHHIIIIIQQQIIQII")
assert HEADER_SHARDED.size == HEADER_LEN_SHARDED
KIND_LOSSES = 1
KIND_GRUNDY = 2
KIND_NAMES = {KIND_LOSSES: "losses", KIND_GRUNDY: "grundy"}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_DCTX = zstandard.ZstdDecompressor()


def crc32(data):
    """The IEEE CRC-32 of FORMAT.md section 1."""
    return zlib.crc32(data) & 0xFFFFFFFF


def zstd_one_frame(data, limit, path, what):
    """Decodes `data` as exactly one zstd frame of at most `limit` bytes.

    The fast path is one call into libzstd: the frame's declared size is
    checked against `limit` first, and an undeclared size is bounded by
    `max_output_size`, so a hostile frame cannot make it allocate more. Any
    failure is diagnosed again by `_zstd_stepwise`, which says precisely what
    is wrong (truncated, too large, bytes after the frame)."""
    if bytes(data[:4]) != ZSTD_MAGIC:
        raise corrupt(path, "%s: not a zstd frame" % what)
    try:
        declared = zstandard.get_frame_parameters(data).content_size
    except zstandard.ZstdError as e:
        raise corrupt(path, "%s: bad zstd frame header: %s" % (what, e))
    if declared != zstandard.CONTENTSIZE_UNKNOWN and declared > limit:
        raise corrupt(path, "%s: zstd frame decodes to more than %d bytes" % (what, limit))
    try:
        out = _DCTX.decompress(data, max_output_size=max(limit, 1), read_across_frames=False, allow_extra_data=False)
    except zstandard.ZstdError:
        out = None
    except TypeError:  # a zstandard older than 0.19 lacks allow_extra_data: the slow path decides
        return _zstd_stepwise(data, limit, path, what)
    if out is None or len(out) > limit or (declared != zstandard.CONTENTSIZE_UNKNOWN and len(out) != declared):
        _zstd_stepwise(data, limit, path, what)  # raises with the precise reason
        raise corrupt(path, "%s: bad zstd frame" % what)  # not reached: the stepwise decoder raised
    return out


def _zstd_stepwise(data, limit, path, what):
    """Decodes one frame a few input bytes at a time, so that memory stays
    bounded whatever the frame says; slow, used to explain a failure (and
    with a zstandard too old for the fast path). Returns the bytes."""
    dobj = zstandard.ZstdDecompressor().decompressobj()
    parts = []
    total = 0
    step = 64
    pos = 0
    try:
        while pos < len(data) and not dobj.eof:
            chunk = dobj.decompress(bytes(data[pos : pos + step]))
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


def parse_table(path, data, expect_kind=None):
    """Checks a table image (magic, version, CRCs, sizes, kind).

    Returns (header dict, payload memoryview)."""
    if len(data) < HEADER_LEN:
        raise corrupt(path, "truncated: %d bytes, shorter than the 64-byte header" % len(data))
    fields = HEADER.unpack_from(data, 0)
    (magic, version, kind, tiles, max_rows, max_cols, max_tiles, block_size, positions, losses, payload_len, payload_crc, header_crc) = fields
    if magic != MAGIC:
        raise corrupt(path, "not a chomp table (wrong magic bytes)")
    if version not in (VERSION, VERSION_SHARDED):
        raise corrupt(path, "table format version %d, this reader knows versions %d and %d" % (version, VERSION, VERSION_SHARDED))
    header_len, shard = HEADER_LEN, None
    if version == VERSION_SHARDED:
        if len(data) < HEADER_LEN_SHARDED:
            raise corrupt(path, "truncated: %d bytes, shorter than the 80-byte header" % len(data))
        index, first, count, header_crc = HEADER_SHARDED.unpack_from(data, 0)[-4:]
        header_len, shard = HEADER_LEN_SHARDED, {"shard": index, "first": first, "shards": count}
        if index >= count:
            raise corrupt(path, "shard index beyond the level's shard count")
    view = memoryview(data)
    if crc32(view[0 : header_len - 4]) != header_crc:
        raise corrupt(path, "header checksum mismatch")
    if kind not in KIND_NAMES:
        raise corrupt(path, "unknown table kind %d" % kind)
    if expect_kind is not None and kind != expect_kind:
        raise corrupt(path, "expected a %s table, found a %s table" % (KIND_NAMES[expect_kind], KIND_NAMES[kind]))
    if payload_len != len(data) - header_len:
        raise corrupt(path, "truncated or padded: header announces %d payload bytes, file has %d" % (payload_len, len(data) - header_len))
    payload = view[header_len:]
    if crc32(payload) != payload_crc:
        raise corrupt(path, "payload checksum mismatch")
    if positions == 0 or positions > (0xFFFFFFFF if shard is None else 1 << 32):
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
    if shard is not None:
        header.update(shard)
    return header, payload


def loss_payload_bound(positions):
    """Largest decompressed loss payload accepted (FORMAT.md section 10, item 8):
    room for containers of at most 8194 bytes each, with the headers."""
    return (positions // 65536 + 1) * 8208 + 64


class GrundyTable:
    """A checked Grundy table (FORMAT.md section 7); blocks decode on demand
    and stay cached."""

    def __init__(self, path, header, payload):
        self.path = path
        self.header = header
        self.payload = payload
        bs = header["block_size"]
        positions = header["positions"]
        self.block_size = bs
        self.blocks = (positions + bs - 1) // bs
        index_len = 8 * (self.blocks + 1)
        if len(payload) < index_len:
            raise corrupt(path, "block index truncated")
        offs = struct.unpack_from("<%dQ" % (self.blocks + 1), payload, 0)
        if offs[0] != index_len or offs[-1] != len(payload) or any(a > b for a, b in zip(offs, offs[1:])):
            raise corrupt(path, "inconsistent block index")
        self.offsets = offs
        self._cache = {}

    def block(self, b):
        """The values of block `b` (bytes), checked to have the right length."""
        raw = self._cache.get(b)
        if raw is None:
            bs = self.block_size
            want = min(bs, self.header["positions"] - b * bs)
            frame = self.payload[self.offsets[b] : self.offsets[b + 1]]
            raw = zstd_one_frame(frame, want, self.path, "block %d" % b)
            if len(raw) != want:
                raise corrupt(self.path, "block %d decodes to %d bytes, expected %d" % (b, len(raw), want))
            self._cache[b] = raw
        return raw

    def value(self, rank):
        """The misère Grundy value of the position of rank `rank`."""
        return self.block(rank // self.block_size)[rank % self.block_size]

    def all_values(self):
        """Every value of the level (bytes), checked to hold `losses` zeros."""
        out = b"".join(self.block(b) for b in range(self.blocks))
        zeros = out.count(0)
        if zeros != self.header["losses"]:
            raise corrupt(self.path, "holds %d zero values, header says %d losses" % (zeros, self.header["losses"]))
        return out
