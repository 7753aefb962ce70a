/**
 * Reads a step's `rows:` file (CSV with a header row, or JSONL) into one set
 * of template values per row, keeping each row's line for messages.
 */
import { EXIT, IbatchError } from '../shared/index.js';
import { CsvSyntaxError, forEachCsvRow } from './csv.js';
import { DEFAULT_JOB_LIMITS, formatCount, InputFileRefused, readRegularFile } from './limits.js';
import type { TemplateValue } from './types.js';

export interface Row {
  /** 1-based line of the row in its file. */
  readonly line: number;
  readonly vars: Readonly<Record<string, TemplateValue>>;
}

/** A step's `rows:` file is missing or malformed (exit 2: the job is invalid). */
export class RowsFileError extends IbatchError {
  constructor(message: string) {
    super('rows_file', message, EXIT.invalid);
  }
}

/** A rows file longer than `maxRows`: reading stopped at the first row over it. */
export class TooManyRowsError extends RowsFileError {
  constructor(
    displayName: string,
    readonly maxRows: number,
  ) {
    super(`rows file ${displayName} has more than ${formatCount(maxRows)} rows`);
  }
}

export interface RowsCeilings {
  /** Largest file read. @default 256 MB */
  readonly maxBytes?: number;
  /** Reading stops with an error past this many rows (the job's item ceiling). */
  readonly maxRows?: number;
}

/**
 * A rows file read and checked whole (every row, so a mistake anywhere is
 * found before any item is made), its rows made again on each `forEach`
 * rather than held: a 100,000-row file's rows were about 24 MB for as long
 * as its step expanded. The text read once is what every pass parses.
 */
export class RowsFile {
  private constructor(
    private readonly text: string,
    private readonly jsonl: boolean,
    private readonly displayName: string,
    /** The first row's value names (its columns). */
    readonly columns: readonly string[],
  ) {}

  /**
   * Reads and checks `path`; throws `RowsFileError` with a message naming the
   * file's line. Only a regular file of at most `maxBytes` is read (no FIFO,
   * no /dev/zero).
   */
  static open(path: string, displayName: string, ceilings: RowsCeilings = {}): RowsFile {
    const maxBytes = ceilings.maxBytes ?? DEFAULT_JOB_LIMITS.maxRowsFileBytes;
    let text: string;
    try {
      text = readRegularFile(path, 'rows file', maxBytes);
    } catch (error) {
      if (error instanceof InputFileRefused)
        throw new RowsFileError(`rows file ${displayName} ${error.message}`);
      const code = (error as NodeJS.ErrnoException).code;
      throw new RowsFileError(
        code === 'ENOENT'
          ? `rows file ${displayName} does not exist`
          : `cannot read rows file ${displayName} (${code})`,
      );
    }
    const jsonl = !/\.csv$/i.test(path);
    const maxRows = ceilings.maxRows ?? Number.POSITIVE_INFINITY;
    let count = 0;
    let columns: readonly string[] = [];
    eachRow(text, jsonl, displayName, (row) => {
      if (count >= maxRows) throw new TooManyRowsError(displayName, maxRows);
      if (count === 0) columns = Object.keys(row.vars);
      count++;
    });
    return new RowsFile(text, jsonl, displayName, columns);
  }

  /** Each row, in file order (parsed again: the file was checked whole by `open`). */
  forEach(onRow: (row: Row) => void): void {
    eachRow(this.text, this.jsonl, this.displayName, onRow);
  }
}

/**
 * Reads rows into an array (see `RowsFile.open`); throws `RowsFileError`
 * with a message naming the file's line.
 */
export function readRows(path: string, displayName: string, ceilings: RowsCeilings = {}): Row[] {
  const rows: Row[] = [];
  RowsFile.open(path, displayName, ceilings).forEach((row) => {
    rows.push(row);
  });
  return rows;
}

function eachRow(
  text: string,
  jsonl: boolean,
  displayName: string,
  onRow: (row: Row) => void,
): void {
  if (jsonl) jsonlRows(text, displayName, onRow);
  else csvRows(text, displayName, onRow);
}

function csvRows(text: string, displayName: string, onRow: (row: Row) => void): void {
  let count = 0;
  try {
    forEachCsvRow(text, (record, header) => {
      const vars: Record<string, TemplateValue> = {};
      header.forEach((name, i) => {
        vars[name] = record.fields[i] ?? '';
      });
      count++;
      onRow({ line: record.line, vars });
    });
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new RowsFileError(`${displayName} ${error.message}`);
    throw error;
  }
  if (count === 0) throw new RowsFileError(`${displayName} has a header but no rows`);
}

function jsonlRows(text: string, displayName: string, onRow: (row: Row) => void): void {
  let count = 0;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // Line by line without splitting the whole file: the rows, not a second
  // copy of the text, are what a large file may hold in memory.
  let start = 0;
  for (let index = 0; start <= body.length; index++) {
    const newline = body.indexOf('\n', start);
    const end = newline < 0 ? body.length : newline;
    const raw = body.slice(start, end > start && body.charCodeAt(end - 1) === 13 ? end - 1 : end);
    start = end + 1;
    const line = index + 1;
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new RowsFileError(
        `${displayName} line ${line}: invalid JSON (${(error as Error).message})`,
      );
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new RowsFileError(`${displayName} line ${line}: expected a JSON object per line`);
    }
    const vars: Record<string, TemplateValue> = {};
    for (const [name, v] of Object.entries(value)) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
        throw new RowsFileError(
          `${displayName} line ${line}: "${name}" must be a string, number or boolean`,
        );
      }
      vars[name] = v;
    }
    count++;
    onRow({ line, vars });
  }
  if (count === 0) throw new RowsFileError(`${displayName} has no rows`);
}
