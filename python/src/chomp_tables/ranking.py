"""The ranking of positions within a level (FORMAT.md section 8):
lexicographic order of the row lengths, top row first, shorter first."""


class Ranking:
    """Ranks positions of a universe with row bound `rows` and column bound
    `cols` (None: unbounded) up to level `top`."""

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
                base = (p * sdim + s) * mdim
                for m in range(mdim):
                    if s == 0:
                        v = 1
                    elif m == 0 or (self.rows is not None and p == 0):
                        v = 0
                    else:
                        v = t[base + m - 1]
                        if s >= m:
                            below = p - 1 if self.rows is not None else 0
                            v += t[(below * sdim + s - m) * mdim + m]
                    t[base + m] = v
        self.table = t

    def q(self, s, r, m):
        """Partitions of `s` into at most `r` parts (None: any number), each at most `m`."""
        if s < 0:
            return 0
        m = min(m, self.max_part)
        if self.rows is None:
            plane = 0
        else:
            plane = min(r, self.rows) if r is not None else self.rows
        return self.table[(plane * self.sdim + s) * self.mdim + m]

    def size(self, n):
        """Positions of level `n` (0 outside 1..top)."""
        if n < 1 or n > self.top:
            return 0
        return self.q(n, self.rows, self.max_part)

    def rank(self, rows):
        """The rank of a position of the universe within its level."""
        suffix = sum(rows)
        r = 0
        for i, v in enumerate(rows):
            r += self.q(suffix, None if self.rows is None else self.rows - i, v - 1)
            suffix -= v
        return r

    def unrank(self, n, rank):
        """The position of level `n` with rank `rank` (a list of rows)."""
        if not 0 <= rank < self.size(n):
            raise ValueError("rank %d is not below the size %d of level %d" % (rank, self.size(n), n))
        rows = []
        s, prev = n, self.max_part
        while s > 0:
            i = len(rows)
            left = None if self.rows is None else self.rows - i
            # The largest v <= min(s, prev) with Q(s, left, v - 1) <= rank.
            v = min(s, prev)
            while self.q(s, left, v - 1) > rank:
                v -= 1
            rank -= self.q(s, left, v - 1)
            rows.append(v)
            s -= v
            prev = v
        return rows
