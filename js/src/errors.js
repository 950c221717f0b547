// The errors this package throws: every one a ChompTablesError with a one-line
// message naming the file, directory or position involved.

/** Every error this package throws: one line, naming the file or directory involved. */
export class ChompTablesError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** A file of the table directory is missing, unreadable, damaged or mismatched. */
export class TableError extends ChompTablesError {}

/** The question is malformed or not covered by the tables. */
export class QuestionError extends ChompTablesError {}

/** The text or list given is not a Chomp position. */
export class InvalidPosition extends QuestionError {}

/** The position is valid but the tables do not cover it. */
export class NotInTables extends QuestionError {}

export function corrupt(path, what) {
  return new TableError(`${path}: ${what}`);
}
