"""manifest.json (FORMAT.md section 3) and the checks of section 10."""

import hashlib
import json

from .errors import corrupt

FORMAT_NAME = "chomp-tables"
VERSION = 1
#: Format 2 (FORMAT.md section 14): levels split into shards.
VERSION_SHARDED = 2
#: Format 3 (FORMAT.md section 17): block-addressable tables, levels in shards or not.
VERSION_BLOCKED = 3
VERSIONS = (VERSION, VERSION_SHARDED, VERSION_BLOCKED)
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
MANIFEST_FIELDS_SHARDED = (
    "format",
    "format_version",
    "tool_version",
    "universe",
    "grundy_max_tiles",
    "shard_positions",
    "levels_complete",
    "complete",
    "levels",
    "shards",
    "files",
    "checksum",
)
SHARD_FIELDS = ("first", "positions", "losses")
UNIVERSE_FIELDS = ("rows", "cols", "tiles")
LEVEL_FIELDS = ("tiles", "positions", "losses")
LEVEL_FIELDS_GRUNDY = LEVEL_FIELDS + ("grundy_histogram",)
#: A run that counted winning moves (`count_moves`) ends each level with these.
LEVEL_FIELDS_MOVES = ("wins_one_move", "wins_several_moves")
#: And, on a level with Grundy values, may add this last (FORMAT.md section 3).
LEVEL_FIELD_HISTOGRAM = "winning_moves_histogram"
FILE_FIELDS = ("bytes", "sha256")
#: A format 3 table's entry also records its head (FORMAT.md section 17).
FILE_FIELDS_HEAD = ("bytes", "sha256", "head_bytes", "head_sha256")


def check_winning_moves(level, i, path):
    """A level's histogram of winning moves: counts without trailing zeros that
    add up to its positions, its losses first, then its wins with one winning
    move, then those with several."""
    h = level[LEVEL_FIELD_HISTOGRAM]
    if not isinstance(h, list) or not h or (len(h) > 1 and h[-1] == 0):
        raise corrupt(path, "invalid manifest: levels[%d].%s is not a list of counts ending in a non-zero one" % (i, LEVEL_FIELD_HISTOGRAM))
    for k, c in enumerate(h):
        check_int(c, "levels[%d].%s[%d]" % (i, LEVEL_FIELD_HISTOGRAM, k), path)
    if (sum(h), h[0], h[1] if len(h) > 1 else 0, sum(h[2:])) != (
        level["positions"],
        level["losses"],
        level["wins_one_move"],
        level["wins_several_moves"],
    ):
        raise corrupt(path, "invalid manifest: levels[%d]: its histogram of winning moves disagrees with its counts" % i)


def is_sharded(m):
    """Whether the levels of a manifest's directory are split into shards."""
    return m["format_version"] == VERSION_SHARDED or (m["format_version"] == VERSION_BLOCKED and "shard_positions" in m)


def check_int(v, what, path, nullable=False):
    if v is None and nullable:
        return
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise corrupt(path, "invalid manifest: %s is not a non-negative integer" % what)


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


def parse_manifest(raw, path):
    """Parses and checks the bytes of a manifest.json; returns the dict (in
    the file's key order). Raises `TableError` on any deviation."""
    if b"\r" in raw:
        raise corrupt(path, "manifest not in canonical form: it holds a carriage return (CRLF line endings?)")
    try:
        m = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise corrupt(path, "invalid manifest: %s" % e)
    check_manifest(m, path, raw)
    return m


def check_manifest(m, path, raw):
    if not isinstance(m, dict):
        raise corrupt(path, "invalid manifest: not a JSON object")
    # The format and its version first: a newer manifest may differ in anything else.
    if m.get("format") != FORMAT_NAME:
        raise corrupt(path, "invalid manifest: format is %r, not %r" % (m.get("format"), FORMAT_NAME))
    version = m.get("format_version")
    if version not in VERSIONS or isinstance(version, bool):
        raise corrupt(path, "format version %r, this reader knows versions 1, 2 and 3" % (version,))
    sharded = version == VERSION_SHARDED or (version == VERSION_BLOCKED and "shard_positions" in m)
    fields = MANIFEST_FIELDS_SHARDED if sharded else MANIFEST_FIELDS
    if sharded and "shards" not in m and m.get("levels_complete") == 0:
        # The writer omits an empty shard list (FORMAT.md section 14).
        fields = tuple(f for f in fields if f != "shards")
    if version == VERSION_BLOCKED and "checks" in m:
        # The check inside every level, before the files (FORMAT.md section 17).
        fields = fields[:-2] + ("checks",) + fields[-2:]
    moves = m.get("count_moves") is True
    if moves:
        # Before levels_complete (FORMAT.md section 3).
        at = fields.index("levels_complete")
        fields = fields[:at] + ("count_moves",) + fields[at:]
    if set(m) != set(fields):
        missing = [k for k in fields if k not in m]
        extra = sorted(k for k in m if k not in fields)
        raise corrupt(path, "invalid manifest: missing fields %s, unknown fields %s" % (missing, extra))
    # The canonical text below keeps the parsed key order, so the fixed
    # order of FORMAT.md sections 3 and 14 is checked here.
    if tuple(m) != fields:
        raise corrupt(path, "manifest not in canonical form: fields out of order")
    # The checksum covers the values; byte equality with the canonical text covers the rest.
    if not isinstance(m["checksum"], str):
        raise corrupt(path, "invalid manifest: checksum is not a string")
    if hashlib.sha256(canonical_manifest(m, "").encode("utf-8")).hexdigest() != m["checksum"]:
        raise corrupt(path, "manifest checksum mismatch (damaged or edited)")
    if canonical_manifest(m, m["checksum"]).encode("utf-8") != raw:
        raise corrupt(path, "manifest not in canonical form (damaged or edited)")
    if not isinstance(m["tool_version"], str) or not isinstance(m["complete"], bool):
        raise corrupt(path, "invalid manifest: tool_version or complete has the wrong type")
    u = m["universe"]
    if not isinstance(u, dict) or set(u) != set(UNIVERSE_FIELDS):
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
        extra = LEVEL_FIELDS_MOVES if moves else ()
        allowed = (LEVEL_FIELDS + extra, LEVEL_FIELDS_GRUNDY + extra)
        if moves:
            allowed += (LEVEL_FIELDS_GRUNDY + extra + (LEVEL_FIELD_HISTOGRAM,),)
        if tuple(level) not in allowed:
            raise corrupt(
                path,
                "invalid manifest: levels[%d] has fields %s, not %s[, %s]%s"
                % (
                    i,
                    list(level),
                    list(LEVEL_FIELDS),
                    LEVEL_FIELDS_GRUNDY[-1],
                    "".join(", " + f for f in extra) + ("[, %s]" % LEVEL_FIELD_HISTOGRAM if moves else ""),
                ),
            )
        check_int(level.get("positions"), "levels[%d].positions" % i, path)
        check_int(level.get("losses"), "levels[%d].losses" % i, path)
        for f in extra:
            check_int(level[f], "levels[%d].%s" % (i, f), path)
        if moves and level["losses"] + level["wins_one_move"] + level["wins_several_moves"] != level["positions"]:
            raise corrupt(path, "invalid manifest: levels[%d]: losses and wins do not add up to its positions" % i)
        if LEVEL_FIELD_HISTOGRAM in level:
            check_winning_moves(level, i, path)
    if sharded and "shards" in m:
        check_shards(m, path)
    if "checks" in m:
        check_checks(m, path)
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
        table = version == VERSION_BLOCKED and (rel.startswith("losses/") or rel.startswith("grundy/"))
        want = FILE_FIELDS_HEAD if table else FILE_FIELDS
        if tuple(entry) != want:
            raise corrupt(path, "invalid manifest: files[%r] has fields %s, not %s" % (rel, list(entry), list(want)))
        check_int(entry.get("bytes"), "files[%r].bytes" % rel, path)
        if table:
            check_int(entry.get("head_bytes"), "files[%r].head_bytes" % rel, path)
            if not isinstance(entry["head_sha256"], str) or entry["head_bytes"] >= entry["bytes"]:
                raise corrupt(path, "invalid manifest: files[%r] has a head longer than the file or no head SHA-256" % rel)


def check_checks(m, path):
    """The record of the check inside every level: complete levels in
    increasing order, each with no more positions than the level has and no
    more losses than positions checked (drawn with replacement)."""
    checks, last = m["checks"], 0
    if not isinstance(checks, list) or not checks:
        raise corrupt(path, "invalid manifest: checks is not a non-empty list")
    for c in checks:
        if not isinstance(c, dict) or tuple(c) != LEVEL_FIELDS:
            raise corrupt(path, "invalid manifest: a checks entry has fields other than %s" % list(LEVEL_FIELDS))
        for k in LEVEL_FIELDS:
            check_int(c[k], "checks[].%s" % k, path)
        n = c["tiles"]
        if n <= last or n > m["levels_complete"]:
            raise corrupt(path, "invalid manifest: checks: level %d out of order or not complete" % n)
        level = m["levels"][n - 1]
        if c["positions"] > level["positions"] or c["losses"] > c["positions"]:
            raise corrupt(path, "invalid manifest: checks: level %d counted with more positions than it has, or more losses than positions" % n)
        last = n


def check_shards(m, path):
    """The shard lists of a format 2 manifest tile their levels (FORMAT.md section 14)."""
    limit = m["shard_positions"]
    check_int(limit, "shard_positions", path)
    if not 1 <= limit <= 1 << 32:
        raise corrupt(path, "invalid manifest: shard_positions %d is not in 1..=2^32" % limit)
    shards = m["shards"]
    if shards == []:
        # Absent, never empty, while no level is complete (FORMAT.md section 3).
        raise corrupt(path, "invalid manifest: shards is empty (the field is absent while no level is complete)")
    if not isinstance(shards, list) or len(shards) != m["levels_complete"]:
        raise corrupt(path, "invalid manifest: shards must list exactly levels_complete levels")
    for i, (level, ss) in enumerate(zip(m["levels"], shards)):
        if not isinstance(ss, list) or not ss:
            raise corrupt(path, "invalid manifest: shards[%d] is not a non-empty list" % i)
        nxt, losses = 0, 0
        for s in ss:
            if not isinstance(s, dict) or tuple(s) != SHARD_FIELDS:
                raise corrupt(path, "invalid manifest: a shard of level %d has fields other than %s" % (i + 1, list(SHARD_FIELDS)))
            for k in SHARD_FIELDS:
                check_int(s[k], "shards[%d].%s" % (i, k), path)
            if s["first"] != nxt or not 1 <= s["positions"] <= limit or s["losses"] > s["positions"]:
                raise corrupt(path, "invalid manifest: level %d: shards do not tile the level in order" % (i + 1))
            nxt += s["positions"]
            losses += s["losses"]
        if nxt != level.get("positions") or losses != level.get("losses"):
            raise corrupt(path, "invalid manifest: level %d: shards do not add up to the level's positions and losses" % (i + 1))


def universe_top(u):
    """The top level of a universe: min(tiles, rows * cols), absent bounds infinite."""
    top = u["tiles"] if u["tiles"] is not None else 1 << 62
    if u["rows"] is not None and u["cols"] is not None:
        top = min(top, u["rows"] * u["cols"])
    return top


def universe_bounds(u):
    """The bounds in words, as chomp prints them: "at most 8 rows and 15 columns"."""

    def plural(n, what):
        return "%d %s%s" % (n, what, "" if n == 1 else "s")

    parts = []
    if u["rows"] is not None:
        parts.append(plural(u["rows"], "row"))
    if u["cols"] is not None:
        parts.append(plural(u["cols"], "column"))
    if u["tiles"] is not None:
        parts.append(plural(u["tiles"], "tile"))
    last = parts.pop() if parts else ""
    if not parts:
        return "at most %s" % last
    return "at most %s and %s" % (", ".join(parts), last)
