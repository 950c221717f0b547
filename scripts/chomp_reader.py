#!/usr/bin/env python3
"""The old command line of the independent Python reader, kept as a thin
wrapper: the reader is now the package in python/ (`pip install ./python`,
import name `chomp_tables`; see python/README.md).

    python3 scripts/chomp_reader.py TABLE_DIR "3 2 1" [--json]
    python3 scripts/chomp_reader.py TABLE_DIR --batch POSITIONS.txt
    python3 scripts/chomp_reader.py --dump TABLE_FILE

are `python3 -m chomp_tables query "3 2 1" --tables TABLE_DIR [--json]`,
`... batch POSITIONS.txt --tables TABLE_DIR` and `... dump TABLE_FILE`. It
uses the package from this checkout (python/src), installed or not.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python", "src"))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Read a chomp-tables directory (wrapper over python -m chomp_tables).")
    ap.add_argument("table_dir", nargs="?")
    ap.add_argument("position", nargs="?")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--batch", metavar="FILE")
    ap.add_argument("--dump", metavar="TABLE_FILE")
    args = ap.parse_args(argv)
    if args.dump is not None:
        if args.table_dir is not None:
            ap.error("--dump takes no table directory or position")
        new = ["dump", args.dump]
    elif args.table_dir is None or (args.batch is None) == (args.position is None):
        ap.error("give TABLE_DIR and either a POSITION or --batch FILE")
    elif args.batch is not None:
        new = ["batch", args.batch, "--tables", args.table_dir]
    else:
        new = ["query", args.position, "--tables", args.table_dir] + (["--json"] if args.json else [])
    try:
        from chomp_tables.cli import main as package_main
    except ImportError as e:
        print("error: %s (pip install zstandard)" % e, file=sys.stderr)
        return 2
    return package_main(new)


if __name__ == "__main__":
    sys.exit(main())
