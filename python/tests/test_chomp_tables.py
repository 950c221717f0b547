"""Unit tests of the chomp_tables package (plain unittest, no pytest needed):

    python3 -m unittest discover -s python/tests

They read the published tables in results/ (no solver needed) and build
small roaring serializations and table files by hand. The package is taken
from the installed one when importable, else from python/src.
"""

import hashlib
import os
import shutil
import struct
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
try:
    import chomp_tables
except ImportError:
    sys.path.insert(0, os.path.join(REPO, "python", "src"))
    import chomp_tables

import zstandard

from chomp_tables import InvalidPosition, NotInTables, TableError
from chomp_tables.position import conjugate
from chomp_tables.ranking import Ranking
from chomp_tables.roaring import SerializedRoaring
from chomp_tables.tablefile import _zstd_stepwise, zstd_one_frame

BOX = os.path.join(REPO, "results", "box-8x15")
LOSSES_100 = os.path.join(REPO, "results", "losses-100")


def partitions(n, max_part=None):
    """Every partition of n (parts non-increasing)."""
    max_part = n if max_part is None else max_part
    if n == 0:
        yield []
        return
    for first in range(min(n, max_part), 0, -1):
        for rest in partitions(n - first, first):
            yield [first] + rest


def brute_losses(n_max):
    """Outcome of every position up to n_max tiles, by the definition."""
    loss = {}
    for n in range(1, n_max + 1):
        for p in partitions(n):
            t = tuple(p)
            if t == (1,):
                loss[t] = True
                continue
            children = []
            for a, length in enumerate(p):
                for b in range(length):
                    if a == 0 and b == 0:
                        continue
                    c = tuple(v for v in (v if i < a else min(v, b) for i, v in enumerate(p)) if v > 0)
                    children.append(c)
            loss[t] = not any(loss[c] for c in children)
    return loss


def roaring_bytes(containers, runs_cookie=False):
    """A portable serialization of containers [(key, kind, values)] with kind
    "array", "bitmap" or "run" (values: sorted lows; for runs (start, len-1) pairs)."""
    size = len(containers)
    out = bytearray()
    if runs_cookie:
        out += struct.pack("<I", 12347 | ((size - 1) << 16))
        flags = bytearray((size + 7) // 8)
        for i, (_, kind, _) in enumerate(containers):
            if kind == "run":
                flags[i // 8] |= 1 << (i % 8)
        out += flags
        has_offsets = size >= 4
    else:
        out += struct.pack("<II", 12346, size)
        has_offsets = True
    bodies = []
    for key, kind, values in containers:
        if kind == "array":
            card, body = len(values), struct.pack("<%dH" % len(values), *values)
        elif kind == "bitmap":
            bits = 0
            for v in values:
                bits |= 1 << v
            card, body = len(values), bits.to_bytes(8192, "little")
        else:
            card = sum(l + 1 for _, l in values)
            body = struct.pack("<H", len(values)) + b"".join(struct.pack("<HH", s, l) for s, l in values)
        out += struct.pack("<HH", key, card - 1)
        bodies.append(body)
    pos = len(out) + (4 * size if has_offsets else 0)
    if has_offsets:
        for body in bodies:
            out += struct.pack("<I", pos)
            pos += len(body)
    for body in bodies:
        out += body
    return bytes(out)


class PositionTest(unittest.TestCase):
    def test_forms(self):
        p = chomp_tables.parse_position
        self.assertEqual(p("5 3 1"), [5, 3, 1])
        self.assertEqual(p("5,3,1"), [5, 3, 1])
        self.assertEqual(p(" 5 , 3,1 "), [5, 3, 1])
        self.assertEqual(p([5, 3, 1]), [5, 3, 1])
        self.assertEqual(p((2, 2)), [2, 2])

    def test_errors(self):
        cases = {
            "": "empty position",
            "3 0": "row 1 has length 0",
            "2 3": "row 1 (3) is longer than the row above it (2)",
            "3 x": 'row 1 is "x", not a positive integer',
            "-1": 'row 0 is "-1", not a positive integer',
            "3,,1": "row 1 is missing",
            "256": "position too large",
            "99999999999": "position too large",
        }
        for text, needle in cases.items():
            with self.assertRaises(InvalidPosition) as ctx:
                chomp_tables.parse_position(text)
            self.assertIn(needle, str(ctx.exception), text)
            self.assertIsInstance(ctx.exception, ValueError)
        for bad in ([], [2, 3], [1, 0], ["3"], [True], 5):
            with self.assertRaises(InvalidPosition):
                chomp_tables.parse_position(bad)

    def test_conjugate(self):
        self.assertEqual(conjugate([3, 2, 1]), [3, 2, 1])
        self.assertEqual(conjugate([4, 1]), [2, 1, 1, 1])


class RankingTest(unittest.TestCase):
    def test_rank_is_lexicographic_and_unrank_inverts_it(self):
        for rows, cols, top in [(None, None, 14), (3, 4, 12), (8, 15, 120), (None, 5, 13)]:
            r = Ranking(rows, cols, top)
            for n in range(1, min(top, 14) + 1):
                level = [p for p in partitions(n) if (rows is None or len(p) <= rows) and (cols is None or p[0] <= cols)]
                level.sort()
                self.assertEqual(r.size(n), len(level))
                for i, p in enumerate(level):
                    self.assertEqual(r.rank(p), i)
                    self.assertEqual(r.unrank(n, i), p)

    def test_worked_examples_of_format_md(self):
        self.assertEqual(Ranking(None, None, 30).rank([3, 2, 1]), 5)
        self.assertEqual(Ranking(3, 3, 9).rank([3, 2, 1]), 1)
        self.assertEqual(Ranking(3, 4, 12).rank([4, 2, 1]), 2)


class RoaringTest(unittest.TestCase):
    def check(self, raw, want):
        b = SerializedRoaring(raw, "test")
        self.assertEqual(len(b), len(want))
        for x in sorted(want)[:50] + sorted(want)[-50:]:
            self.assertIn(x, b)
        probes = set(range(0, 6 * 65536, 97)) | {v + 1 for v in want} | {max(v - 1, 0) for v in want}
        for x in probes:
            self.assertEqual(x in b, x in want, x)
        self.assertEqual(list(b), sorted(want))
        self.assertEqual(b.maximum, max(want) if want else None)

    def test_every_container_kind(self):
        bitmap_vals = list(range(0, 65536, 7))  # 9363 values: a bitmap
        containers = [
            (0, "run", [(10, 4), (100, 0)]),
            (1, "array", [1, 2, 65535]),
            (2, "run", [(0, 9999)]),
            (4, "bitmap", bitmap_vals),
            (5, "array", [7]),
        ]
        want = {10, 11, 12, 13, 14, 100, 65536 + 1, 65536 + 2, 65536 + 65535}
        want |= set(2 * 65536 + v for v in range(10000))
        want |= set(4 * 65536 + v for v in bitmap_vals)
        want.add(5 * 65536 + 7)
        self.check(roaring_bytes(containers, runs_cookie=True), want)
        # Fewer than 4 containers with the run cookie: no offset header.
        self.check(roaring_bytes(containers[:2], runs_cookie=True), {10, 11, 12, 13, 14, 100, 65537, 65538, 131071})
        no_runs = [c for c in containers if c[1] != "run"]
        self.check(roaring_bytes(no_runs), {v for v in want if (v >> 16) in (1, 4, 5)})
        self.check(roaring_bytes([]), set())
        # Adjacent runs do not overlap: allowed (a writer merging them would be smaller, not more correct).
        self.check(roaring_bytes([(0, "run", [(0, 4), (5, 0)])], runs_cookie=True), set(range(6)))

    def test_malformed(self):
        good = roaring_bytes([(0, "array", [1, 5]), (3, "array", [2])])
        self.assertIn(65536 * 3 + 2, SerializedRoaring(good, "t"))
        cases = [
            (b"\x00\x00\x00\x00", "unknown cookie"),
            (good[:-1], "truncated"),
            (good + b"\x00", "after its last container"),
            (roaring_bytes([(3, "array", [1]), (0, "array", [2])]), "keys not increasing"),
            (roaring_bytes([(0, "array", [5, 1]), (3, "array", [2])]), "not strictly increasing"),  # found when read
            (roaring_bytes([(0, "array", [4]), (3, "array", [2, 2])]), "not strictly increasing"),  # the last: at once
            (roaring_bytes([(0, "run", [(65530, 10)])], runs_cookie=True), "run container 0 malformed"),
            (roaring_bytes([(0, "run", [(0, 4), (3, 1)])], runs_cookie=True), "run container 0 malformed"),  # overlapping
        ]
        bad_offset = bytearray(good)
        bad_offset[16] += 1
        cases.append((bytes(bad_offset), "offset header says"))
        for raw, needle in cases:
            with self.assertRaises(TableError) as ctx:
                b = SerializedRoaring(raw, "t")
                for x in (1, 5, 65536 * 3 + 2):
                    x in b  # noqa: B015 (lookups check the containers they read)
            self.assertIn(needle, str(ctx.exception))


class ZstdTest(unittest.TestCase):
    def test_frames(self):
        data = bytes(range(256)) * 40
        with_size = zstandard.ZstdCompressor().compress(data)
        without_size = zstandard.ZstdCompressor(write_content_size=False, write_checksum=True).compress(data)
        for frame in (with_size, without_size):
            self.assertEqual(zstd_one_frame(frame, len(data), "f", "x"), data)
            # The slow path (explanations, old zstandard versions) decodes the same.
            self.assertEqual(_zstd_stepwise(frame, len(data), "f", "x"), data)
            for bad, needle in [
                (frame + b"\x00", "bytes after the zstd frame"),
                (frame + frame, "bytes after the zstd frame"),
                (frame[:-3], "truncated"),
                (b"\x00" + frame, "not a zstd frame"),
            ]:
                with self.assertRaises(TableError) as ctx:
                    zstd_one_frame(bad, len(data), "f", "x")
                self.assertIn(needle, str(ctx.exception))
            with self.assertRaises(TableError) as ctx:
                zstd_one_frame(frame, len(data) - 1, "f", "x")
            self.assertIn("more than", str(ctx.exception))


@unittest.skipUnless(os.path.isdir(BOX), "results/box-8x15 is missing")
class BoxTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.t = chomp_tables.open(BOX)

    def test_example_of_format_md(self):
        a = self.t.query("3 2 1")
        self.assertEqual(list(a), ["position", "tiles", "outcome", "grundy", "grundy_normal", "winning_moves", "moves"])
        self.assertEqual(a["winning_moves"], [[0, 2], [1, 1], [2, 0]])
        self.assertEqual((a["outcome"], a["grundy"], a["grundy_normal"], a["tiles"]), ("win", 1, 2, 6))
        self.assertEqual(list(a["moves"][0]), ["move", "position", "outcome", "grundy"])
        self.assertEqual(a["moves"][0], {"move": [0, 2], "position": [2, 2, 1], "outcome": "loss", "grundy": 0})
        self.assertEqual([m["move"] for m in a["moves"]], [[0, 2], [1, 1], [2, 0], [0, 1], [1, 0]])
        self.assertEqual(self.t.outcome([2, 2, 1]), "loss")
        self.assertEqual(self.t.grundy("3,2,1"), 1)
        self.assertEqual(self.t.winning_moves("3 2 1"), [[0, 2], [1, 1], [2, 0]])
        self.assertEqual(self.t.manifest["universe"], {"rows": 8, "cols": 15, "tiles": None})

    def test_agrees_with_the_definition(self):
        loss = brute_losses(12)
        for p, is_loss in loss.items():
            a = self.t.query(list(p))
            self.assertEqual(a["outcome"] == "loss", is_loss, p)
            self.assertEqual(a["grundy"] == 0, is_loss, p)
            self.assertEqual(bool(a["winning_moves"]), not is_loss, p)

    def test_transpose_and_outside(self):
        self.assertEqual(self.t.query([1] * 9)["outcome"], self.t.query([9])["outcome"])
        with self.assertRaises(NotInTables) as ctx:
            self.t.query("16")
        self.assertEqual(str(ctx.exception), "position 16 (1 row, 16 columns, 16 tiles) is outside the tables (at most 8 rows and 15 columns)")
        with self.assertRaises(NotInTables):
            self.t.query("9 9 9 9 9 9 9 9 9")


@unittest.skipUnless(os.path.isdir(LOSSES_100), "results/losses-100 is missing")
class LazyTest(unittest.TestCase):
    def test_reads_only_the_levels_a_query_needs(self):
        t = chomp_tables.open(LOSSES_100)
        self.assertEqual(t.levels_loaded(), [])
        rows = [20, 18, 15, 12, 10, 8, 5, 2]
        a = t.query(rows)
        self.assertEqual((a["tiles"], a["outcome"], a["grundy"], a["winning_moves"]), (90, "win", None, [[1, 4]]))
        wanted = {90} | {sum(m["position"]) for m in a["moves"]}
        self.assertEqual(set(t.levels_loaded()), wanted)
        self.assertLess(len(wanted), 60)
        self.assertEqual(t.query([100])["outcome"], "win")
        with self.assertRaises(NotInTables) as ctx:
            t.query([101])
        self.assertIn("at most 100 tiles", str(ctx.exception))

    def test_the_block_cache_stays_within_its_bound(self):
        t = chomp_tables.open(LOSSES_100, cache_bytes=200_000)
        for rows in ([20, 18, 15, 12, 10, 8, 5, 2], [30, 25, 20, 15, 10], [50, 40, 10]):
            t.query(rows)
            held, bound = t.cache_usage()
            self.assertEqual(bound, 200_000)
            self.assertTrue(0 < held <= bound, held)


@unittest.skipUnless(os.path.isdir(BOX), "results/box-8x15 is missing")
class DamageTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="chomp-tables-test")
        self.dir = os.path.join(self.tmp, "box")
        self.fresh()

    def fresh(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(BOX, self.dir)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def flip(self, rel, offset):
        path = os.path.join(self.dir, rel)
        with open(path, "rb") as f:
            data = bytearray(f.read())
        data[offset if offset >= 0 else len(data) + offset] ^= 1
        with open(path, "wb") as f:
            f.write(data)

    def expect(self, needle):
        with self.assertRaises(TableError) as ctx:
            chomp_tables.open(self.dir).query("3 2 1")
        self.assertIn(needle, str(ctx.exception))
        self.assertEqual(len(str(ctx.exception).splitlines()), 1)

    def test_flipped_bytes(self):
        # "3 2 1" reads L0006 and G0006, and its children's levels 5 and 3.
        for rel in ("losses/L0006.cht", "grundy/G0006.cht", "losses/L0005.cht", "grundy/G0003.cht"):
            for offset in (0, 12, 40, 60, 64, -1):
                with self.subTest(rel=rel, offset=offset):
                    self.fresh()
                    self.flip(rel, offset)
                    self.expect(rel)

    def test_another_valid_table_in_its_place(self):
        # Structurally valid, CRCs right: only the manifest's SHA-256 (or size) tells.
        src = os.path.join(self.dir, "losses", "L0006.cht")
        with open(src, "rb") as f:
            data = bytearray(f.read())
        data[16] = 9  # max_rows 9, header CRC fixed
        data[60:64] = struct.pack("<I", zlib.crc32(bytes(data[:60])) & 0xFFFFFFFF)
        with open(src, "wb") as f:
            f.write(data)
        self.expect("SHA-256 differs from manifest.json")

    def test_manifest(self):
        path = os.path.join(self.dir, "manifest.json")
        with open(path, "rb") as f:
            raw = f.read()
        with open(path, "wb") as f:
            f.write(raw.replace(b'"losses": 0', b'"losses": 1', 1))
        with self.assertRaises(TableError) as ctx:
            chomp_tables.open(self.dir)
        self.assertIn("checksum", str(ctx.exception))
        with open(path, "wb") as f:
            f.write(raw.replace(b"\n", b"\r\n"))
        with self.assertRaises(TableError):
            chomp_tables.open(self.dir)
        os.remove(path)
        with self.assertRaises(TableError) as ctx:
            chomp_tables.open(self.dir)
        self.assertIn("no manifest.json", str(ctx.exception))

    def test_pinned_to_the_published_manifest(self):
        published = os.path.join(BOX, "manifest.json")
        t = chomp_tables.open(self.dir, against=published)
        self.assertEqual(t.query("3 2 1"), chomp_tables.open(BOX).query("3 2 1"))
        # Another manifest, however valid, is not the published one: refused whole.
        other = os.path.join(self.tmp, "other.json")
        with open(published, "rb") as f:
            raw = f.read()
        with open(other, "wb") as f:
            f.write(raw.replace(b"0", b"1", 1))
        with self.assertRaises(TableError) as ctx:
            chomp_tables.open(self.dir, against=other)
        self.assertIn("not the published tables", str(ctx.exception))

    def test_an_empty_shard_list_is_refused(self):
        # A run in shards that has completed no level: "shards" is absent, never [].
        import json
        from chomp_tables.manifest import canonical_manifest

        with open(os.path.join(BOX, "manifest.json")) as f:
            box = json.load(f)
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)

        def write(with_shards):
            m = {k: box[k] for k in ("format", "format_version", "tool_version", "universe", "grundy_max_tiles")}
            m.update({"shard_positions": 1 << 20, "levels_complete": 0, "complete": False, "levels": []})
            if with_shards:
                m["shards"] = []
            m["files"] = {}
            m["checksum"] = hashlib.sha256(canonical_manifest(m, "").encode()).hexdigest()
            with open(os.path.join(empty, "manifest.json"), "w") as f:
                f.write(canonical_manifest(m, m["checksum"]))

        write(False)
        self.assertEqual(chomp_tables.open(empty).manifest["levels_complete"], 0)
        write(True)
        with self.assertRaises(TableError) as ctx:
            chomp_tables.open(empty)
        self.assertIn("shards is empty", str(ctx.exception))

    def test_sha256_is_what_the_manifest_lists(self):
        t = chomp_tables.open(self.dir)
        entry = t.manifest["files"]["losses/L0006.cht"]
        with open(os.path.join(self.dir, "losses", "L0006.cht"), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), entry["sha256"])


if __name__ == "__main__":
    unittest.main()
