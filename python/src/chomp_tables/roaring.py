"""Membership tests on a roaring bitmap in its portable serialization
(FORMAT.md section 6), read in place.

The whole set is never materialised: a lookup finds the container by binary
search over the keys, then binary-searches an array container, tests a bit of
a bitmap container or searches the runs of a run container. Loading checks
the structure (cookie, keys increasing, offsets consistent, sizes adding up
to the buffer exactly, the total cardinality); each container's contents
(arrays strictly increasing, bitmap popcount and run lengths equal to the
stored cardinality) are checked the first time a lookup reads it, and the
last container at once, which gives the largest member. So no answer ever
comes from an unchecked container; `check_all()` checks every one.
"""

import bisect
import itertools
import operator
import struct
import sys
from array import array

from .errors import corrupt

ROARING_NO_RUNS = 12346
ROARING_RUNS = 12347
ROARING_NO_OFFSET_THRESHOLD = 4
ARRAY_LIMIT = 4096
BITMAP_BYTES = 8192

ARRAY, BITMAP, RUN = 0, 1, 2
_LITTLE = sys.byteorder == "little"


def _popcount(bs):
    n = int.from_bytes(bs, "little")
    return n.bit_count() if hasattr(n, "bit_count") else bin(n).count("1")


class SerializedRoaring:
    """A roaring bitmap read in place from its portable serialization `buf`
    (bytes); `path` names the file in error messages."""

    def __init__(self, buf, path):
        self.buf = buf
        self.path = path
        n = len(buf)

        def need(pos, size, what):
            if pos + size > n:
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
            nflags = (size + 7) // 8
            need(4, nflags, "run flags")
            run_flags = bytes(buf[4 : 4 + nflags])
            pos = 4 + nflags
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
        keys = list(desc[0::2])
        cards = [c + 1 for c in desc[1::2]]
        if not all(map(operator.lt, keys, keys[1:])):
            raise corrupt(path, "roaring bitmap: container keys not increasing")
        if run_flags is None:
            # No run containers: every container's size follows from its cardinality.
            kinds = bytes(ARRAY if c <= ARRAY_LIMIT else BITMAP for c in cards)
            sizes = [2 * c if c <= ARRAY_LIMIT else BITMAP_BYTES for c in cards]
            ends = list(itertools.accumulate(sizes, initial=pos)) if sizes else [pos]
            starts = ends[:-1]
            if offsets is not None and list(offsets) != starts:
                i = next(i for i in range(size) if offsets[i] != starts[i])
                raise corrupt(path, "roaring bitmap: container %d at byte %d, offset header says %d" % (i, starts[i], offsets[i]))
            pos = ends[-1]
            if pos > n:
                i = next(i for i in range(size) if ends[i + 1] > n)
                raise corrupt(path, "roaring bitmap truncated in container %d" % i)
        else:
            kinds = bytearray(size)
            starts = [0] * size
            for i in range(size):
                if offsets is not None and offsets[i] != pos:
                    raise corrupt(path, "roaring bitmap: container %d at byte %d, offset header says %d" % (i, pos, offsets[i]))
                starts[i] = pos
                if run_flags[i // 8] >> (i % 8) & 1:
                    need(pos, 2, "run container")
                    (nruns,) = struct.unpack_from("<H", buf, pos)
                    kinds[i] = RUN
                    pos += 2 + 4 * nruns
                elif cards[i] <= ARRAY_LIMIT:
                    kinds[i] = ARRAY
                    pos += 2 * cards[i]
                else:
                    kinds[i] = BITMAP
                    pos += BITMAP_BYTES
                need(starts[i], pos - starts[i], "container %d" % i)
        if pos != n:
            raise corrupt(path, "roaring bitmap: %d bytes after its last container" % (n - pos))
        self.keys = keys
        self.cards = cards
        self.kinds = bytes(kinds)
        self.starts = starts
        self.cardinality = sum(cards)
        self._decoded = {}
        self.maximum = None
        if size:
            self.maximum = (keys[-1] << 16) | self._container_max(size - 1)

    def __len__(self):
        return self.cardinality

    def _container(self, i):
        """Container `i`, checked and decoded for lookups (cached): an
        array('H') for an array, the 8192 bytes of a bitmap, (starts, ends)
        lists for runs."""
        got = self._decoded.get(i)
        if got is not None:
            return got
        buf, pos, card, kind = self.buf, self.starts[i], self.cards[i], self.kinds[i]
        if kind == ARRAY:
            values = array("H")
            values.frombytes(bytes(buf[pos : pos + 2 * card]))
            if not _LITTLE:
                values.byteswap()
            if not all(map(operator.lt, values, values[1:])):
                raise corrupt(self.path, "roaring bitmap: array container %d not strictly increasing" % i)
            got = values
        elif kind == BITMAP:
            bits = bytes(buf[pos : pos + BITMAP_BYTES])
            if _popcount(bits) != card:
                raise corrupt(self.path, "roaring bitmap: bitmap container %d cardinality mismatch" % i)
            got = bits
        else:
            (nruns,) = struct.unpack_from("<H", buf, pos)
            pairs = struct.unpack_from("<%dH" % (2 * nruns), buf, pos + 2)
            starts, ends = [], []
            count = 0
            prev_end = -1
            for r in range(nruns):
                s, length_minus_one = pairs[2 * r], pairs[2 * r + 1]
                e = s + length_minus_one
                if e > 0xFFFF or s <= prev_end:
                    raise corrupt(self.path, "roaring bitmap: run container %d malformed" % i)
                starts.append(s)
                ends.append(e)
                count += length_minus_one + 1
                prev_end = e
            if count != card:
                raise corrupt(self.path, "roaring bitmap: run container %d holds %d values, header says %d" % (i, count, card))
            got = (starts, ends)
        self._decoded[i] = got
        return got

    def _container_max(self, i):
        c = self._container(i)
        kind = self.kinds[i]
        if kind == ARRAY:
            return c[-1]
        if kind == BITMAP:
            return int.from_bytes(c, "little").bit_length() - 1
        return c[1][-1]

    def __contains__(self, x):
        key, low = x >> 16, x & 0xFFFF
        keys = self.keys
        i = bisect.bisect_left(keys, key)
        if i == len(keys) or keys[i] != key:
            return False
        c = self._container(i)
        kind = self.kinds[i]
        if kind == ARRAY:
            j = bisect.bisect_left(c, low)
            return j < len(c) and c[j] == low
        if kind == BITMAP:
            return bool(c[low >> 3] >> (low & 7) & 1)
        starts, ends = c
        j = bisect.bisect_right(starts, low) - 1
        return j >= 0 and low <= ends[j]

    def check_all(self):
        """Checks every container's contents (loading checks only the structure)."""
        for i in range(len(self.keys)):
            self._container(i)

    def __iter__(self):
        """The members in increasing order (checks each container it reads)."""
        for i, key in enumerate(self.keys):
            base = key << 16
            c = self._container(i)
            kind = self.kinds[i]
            if kind == ARRAY:
                for v in c:
                    yield base | v
            elif kind == BITMAP:
                for byte_index, byte in enumerate(c):
                    while byte:
                        bit = (byte & -byte).bit_length() - 1
                        yield base | (byte_index << 3) | bit
                        byte &= byte - 1
            else:
                for s, e in zip(*c):
                    for v in range(s, e + 1):
                        yield base | v
