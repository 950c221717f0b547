"""The exceptions of the package: about the question, or about the tables."""


class ChompTablesError(Exception):
    """Base class of every error this package raises."""


class TableError(ChompTablesError):
    """A file of the table directory is missing, unreadable, damaged or mismatched.

    The message names the file and what is wrong with it, on one line."""


class QuestionError(ChompTablesError):
    """The position asked about is malformed or not covered by the tables."""


class InvalidPosition(QuestionError, ValueError):
    """The text or list given is not a Chomp position (rows positive, non-increasing)."""


class NotInTables(QuestionError, LookupError):
    """The position is valid but the tables do not cover it (outside the
    universe, or its level is not complete)."""


def corrupt(path, what):
    """A `TableError` about file `path`."""
    return TableError("%s: %s" % (path, what))
