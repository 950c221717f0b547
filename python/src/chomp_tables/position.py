"""Positions: parsing "5 3 1" / "5,3,1" / [5, 3, 1] as `chomp` does."""

import json

from .errors import InvalidPosition

MAX_SIDE = 255
_U32 = 0xFFFFFFFF


class _Problem(Exception):
    pass


def _check_rows(rows):
    if not rows:
        raise _Problem('empty position: a position has at least the poisoned tile, e.g. "1"')
    if len(rows) > MAX_SIDE:
        raise _Problem("position too large: more than %d rows or columns" % MAX_SIDE)
    for index, length in enumerate(rows):
        if length == 0:
            raise _Problem("row %d has length 0; list only non-empty rows" % index)
        if length > MAX_SIDE:
            raise _Problem("position too large: more than %d rows or columns" % MAX_SIDE)
        if index > 0 and length > rows[index - 1]:
            raise _Problem("row %d (%d) is longer than the row above it (%d); rows must not increase" % (index, length, rows[index - 1]))


def _parse_text(text):
    rows = []
    pieces = text.split(",")
    for piece in pieces:
        before = len(rows)
        for token in piece.split():
            index = len(rows)
            digits = token[1:] if token.startswith("+") else token
            if digits and digits.isascii() and digits.isdigit():
                value = int(digits)
                if value > _U32:
                    if token.isdigit():
                        raise _Problem("position too large: more than %d rows or columns" % MAX_SIDE)
                    raise _Problem("row %d is %s, not a positive integer" % (index, json.dumps(token, ensure_ascii=False)))
            else:
                raise _Problem("row %d is %s, not a positive integer" % (index, json.dumps(token, ensure_ascii=False)))
            rows.append(value)
        if len(pieces) > 1 and len(rows) == before:
            raise _Problem("row %d is missing: two commas with nothing between them, or a comma at an end" % len(rows))
    return rows


def parse_position(pos):
    """The rows of a position given as text ("5 3 1", "5,3,1") or as a
    sequence of integers; raises `InvalidPosition` with chomp's message."""
    if isinstance(pos, str):
        try:
            rows = _parse_text(pos)
            _check_rows(rows)
        except _Problem as e:
            raise InvalidPosition("invalid position %s: %s" % (json.dumps(pos, ensure_ascii=False), e)) from None
        return rows
    try:
        rows = list(pos)
    except TypeError:
        raise InvalidPosition("invalid position %r: give a string such as \"3 2 1\" or a list of row lengths" % (pos,)) from None
    for index, v in enumerate(rows):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidPosition("invalid position %r: row %d is %r, not a positive integer" % (pos, index, v))
    try:
        _check_rows(rows)
    except _Problem as e:
        raise InvalidPosition("invalid position %r: %s" % (rows, e)) from None
    return rows


def conjugate(rows):
    """The transposed diagram (columns become rows)."""
    return [sum(1 for r in rows if r > c) for c in range(rows[0])]


def format_rows(rows):
    return " ".join(str(r) for r in rows)
