"""Read chomp-tables directories (FORMAT.md, table formats 1-3).

    import chomp_tables
    t = chomp_tables.open("results/box-8x15")
    t.query("3 2 1")          # the dict of `chomp query --json`
    t.outcome([5, 3, 1])      # "win" or "loss"
    t.grundy("5,3,1")         # misère Grundy value, or None
    t.winning_moves("3 2 1")  # [[0, 2], [1, 1], [2, 0]]
    t.manifest                # the checked manifest.json

A few-row directory (`chomp solve --engine few-row`, FORMAT.md section 18)
opens as a `FewRowTables`, with `query`, `outcome` and `winning_moves`.

Written from FORMAT.md alone: it shares no code with the Rust crate. It needs
the PyPI package `zstandard`; the roaring bitmaps are read in place, without
a roaring library.
"""

from .fewrow import FewRowTables, is_few_row_dir
from .errors import ChompTablesError, InvalidPosition, NotInTables, QuestionError, TableError
from .position import parse_position
from .tables import DEFAULT_CACHE_BYTES, Tables

__version__ = "0.1.0"

__all__ = [
    "ChompTablesError",
    "FewRowTables",
    "InvalidPosition",
    "NotInTables",
    "QuestionError",
    "TableError",
    "Tables",
    "open",
    "parse_position",
]


def open(directory, cache_bytes=DEFAULT_CACHE_BYTES, against=None):  # noqa: A001 (the package's entry point, as in the brief)
    """Opens a table directory: reads and checks its manifest; levels load on
    first use. Format 3 tables are read a block at a time, decoded blocks
    kept in a cache of at most `cache_bytes` (least recently used first out).

    `against`: the path of a published manifest (e.g.
    results/frontier-140-manifest.json). The directory's manifest.json must
    equal it byte for byte, else TableError: every answer then comes from the
    published bytes, and a copy damaged in any way is refused whole."""
    if is_few_row_dir(directory):
        return FewRowTables(directory, against=against)
    return Tables(directory, cache_bytes=cache_bytes, against=against)
