"""The command line: `python -m chomp_tables query|batch|dump`.

    python -m chomp_tables query "3 2 1" --tables DIR [--json]
    python -m chomp_tables batch FILE --tables DIR      # one position per line ('-': stdin)
    python -m chomp_tables dump TABLE_FILE              # check one table file, print it as JSON

Errors print one line `error: MESSAGE` on stderr and exit with status 1
(2 for usage errors), like `chomp`.
"""

import argparse
import json
import os
import sys

from .errors import ChompTablesError, QuestionError, TableError
from .position import format_rows
from .roaring import SerializedRoaring
from .blockfile import read_whole
from .tablefile import GrundyTable, loss_payload_bound, parse_table, zstd_one_frame
from .tables import Tables
from .fewrow import FewRowTables, is_few_row_dir


def _compact(obj):
    return json.dumps(obj, separators=(",", ":"))


def _human(answer):
    tiles = answer["tiles"]
    lines = [
        "position: %s (%d tile%s)" % (format_rows(answer["position"]), tiles, "" if tiles == 1 else "s"),
        "outcome:  %s for the player to move" % answer["outcome"],
    ]
    g = answer["grundy"]
    lines.append("grundy:   not computed at this level" if g is None else "grundy:   %d (misère), %d (normal play)" % (g, g + 1))
    moves = " ".join("(%d,%d)" % (r, c) for r, c in answer["winning_moves"])
    lines.append("winning moves: %s" % (moves or "none"))
    return "\n".join(lines)


def dump(path):
    """Checks one table file on its own (no manifest to compare with) and
    returns its header and contents (loss ranks or Grundy values)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TableError("%s: %s" % (path, e.strerror or e)) from None
    if data[8:10] == b"\x03\x00":
        header, contents = read_whole(path, data)
        out = {k: v for k, v in header.items() if k not in ("digests_crc32", "data_start")}
        out["loss_ranks" if header["kind"] == "losses" else "values"] = list(contents)
        return out
    header, payload = parse_table(path, data)
    out = dict(header)
    if header["kind"] == "losses":
        raw = zstd_one_frame(payload, loss_payload_bound(header["positions"]), path, "loss payload")
        bitmap = SerializedRoaring(raw, path)
        bitmap.check_all()
        if bitmap.cardinality != header["losses"]:
            raise TableError("%s: holds %d losses, header says %d" % (path, bitmap.cardinality, header["losses"]))
        if bitmap.maximum is not None and bitmap.maximum >= header["positions"]:
            raise TableError("%s: a loss rank lies beyond the level" % path)
        out["loss_ranks"] = list(bitmap)
    else:
        out["values"] = list(GrundyTable(path, header, payload).all_values())
    return out


def _batch_lines(name):
    if name == "-":
        return sys.stdin.read().splitlines()
    try:
        with open(name, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError as e:
        raise TableError("%s: %s" % (name, e.strerror or e)) from None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m chomp_tables", description="Read a chomp-tables directory (FORMAT.md, table formats 1-3).")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    q = sub.add_parser("query", help="outcome, Grundy value and moves of one position")
    q.add_argument("position", help='row lengths, top row first: "3 2 1" or "3,2,1"')
    q.add_argument("--tables", required=True, metavar="DIR", help="the table directory")
    q.add_argument("--json", action="store_true", help="print the JSON of `chomp query --json`")
    q.add_argument("--against", metavar="MANIFEST", help="answer only if DIR's manifest.json equals this published manifest")
    b = sub.add_parser("batch", help="one position per line of FILE ('-': stdin), one JSON answer per line")
    b.add_argument("file", metavar="FILE")
    b.add_argument("--tables", required=True, metavar="DIR", help="the table directory")
    b.add_argument("--against", metavar="MANIFEST", help="answer only if DIR's manifest.json equals this published manifest")
    d = sub.add_parser("dump", help="check one table file and print its header and contents as JSON")
    d.add_argument("table_file", metavar="TABLE_FILE")
    args = ap.parse_args(argv)
    try:
        if args.command == "dump":
            print(_compact(dump(args.table_file)))
            return 0
        tables = FewRowTables(args.tables, against=args.against) if is_few_row_dir(args.tables) else Tables(args.tables, against=args.against)
        if args.command == "query":
            answer = tables.query(args.position)
            print(_compact(answer) if args.json else _human(answer))
            return 0
        status = 0
        out = []
        for line in _batch_lines(args.file):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                answer = tables.query(text)
            except QuestionError as e:
                answer = {"position": text, "error": str(e)}
                status = 1
            out.append(_compact(answer))
        sys.stdout.write("".join(s + "\n" for s in out))
        return status
    except ChompTablesError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `... | head`: the reader went away; nothing more to say. Standard
        # output now points at /dev/null, so that the interpreter's final
        # flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
