/**
 * Reads a step's `rows:` file (CSV/TSV with a header row, JSONL, or an
 * `.xlsx` sheet) into one set of template values per row, keeping each row's
 * line for messages.
 */
import { extname } from 'node:path';
import { EXIT, IbatchError } from '../shared/index.js';
import { type CsvRecord, CsvSyntaxError, detectDelimiter, forEachCsvRow } from './csv.js';
import { DEFAULT_JOB_LIMITS, formatCount, InputFileRefused, readRegularFile } from './limits.js';
import { decodeText, TextDecodeProblem } from './text-encoding.js';
import type { RowsFormat, TemplateValue } from './types.js';
import { readXlsxTable, XlsxProblem } from './xlsx.js';

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

type RowsKind = 'delimited' | 'jsonl' | 'sheet';

/** The rows file extensions, by kind. */
const KINDS: Readonly<Record<string, RowsKind>> = {
  '.csv': 'delimited',
  '.tsv': 'delimited',
  // Excel's "Unicode Text" is a tab-separated UTF-16 file named `.txt`.
  '.txt': 'delimited',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.xlsx': 'sheet',
};

function kindOf(path: string): RowsKind {
  return KINDS[extname(path).toLowerCase()] ?? 'jsonl';
}

/**
 * The step's format keys that do not fit its rows file, with why (each is
 * reported at its own key): `delimiter` is for text tables, `sheet` for
 * workbooks, `encoding` for text files.
 */
export function rowsFormatProblems(
  rows: string | undefined,
  format: RowsFormat,
): { key: keyof RowsFormat; message: string }[] {
  const kind = rows === undefined ? undefined : kindOf(rows);
  const problems: { key: keyof RowsFormat; message: string }[] = [];
  const need = (key: keyof RowsFormat, fits: boolean, what: string) => {
    if (format[key] !== undefined && !fits)
      problems.push({
        key,
        message:
          kind === undefined ? `\`${key}:\` needs \`rows:\`` : `\`${key}:\` applies to ${what}`,
      });
  };
  need(
    'encoding',
    kind !== undefined && kind !== 'sheet',
    'text rows files (.csv, .tsv, .txt, .jsonl), not .xlsx',
  );
  need('delimiter', kind === 'delimited', '.csv, .tsv and .txt rows files');
  need('sheet', kind === 'sheet', '.xlsx rows files');
  return problems;
}

/** What a pass over the rows reads: the text (parsed again each pass) or a sheet's cells. */
type Source =
  | { readonly kind: 'delimited'; readonly text: string; readonly delimiter: string }
  | { readonly kind: 'jsonl'; readonly text: string }
  | {
      readonly kind: 'sheet';
      readonly header: readonly string[];
      readonly records: readonly CsvRecord[];
    };

/**
 * A rows file read and checked whole (every row, so a mistake anywhere is
 * found before any item is made), its rows made again on each `forEach`
 * rather than held: held rows would stay in memory for as long as the
 * step expands. The text read once is what every pass parses (a
 * workbook's cells are held instead: unzipping it again on each pass would
 * cost more than they do).
 */
export class RowsFile {
  private constructor(
    private readonly source: Source,
    private readonly displayName: string,
    /** The first row's value names (its columns). */
    readonly columns: readonly string[],
  ) {}

  /**
   * Reads and checks `path`; throws `RowsFileError` with a message naming the
   * file's line. Only a regular file of at most `maxBytes` is read (no FIFO,
   * no /dev/zero).
   */
  static open(
    path: string,
    displayName: string,
    ceilings: RowsCeilings = {},
    format: RowsFormat = {},
  ): RowsFile {
    const maxBytes = ceilings.maxBytes ?? DEFAULT_JOB_LIMITS.maxRowsFileBytes;
    let bytes: Buffer;
    try {
      bytes = readRegularFile(path, 'rows file', maxBytes);
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
    const source = sourceOf(path, bytes, displayName, format, maxBytes);
    const maxRows = ceilings.maxRows ?? Number.POSITIVE_INFINITY;
    let count = 0;
    let columns: readonly string[] = [];
    eachRow(source, displayName, (row) => {
      if (count >= maxRows) throw new TooManyRowsError(displayName, maxRows);
      if (count === 0) columns = Object.keys(row.vars);
      count++;
    });
    return new RowsFile(source, displayName, columns);
  }

  /** Each row, in file order (parsed again: the file was checked whole by `open`). */
  forEach(onRow: (row: Row) => void): void {
    eachRow(this.source, this.displayName, onRow);
  }
}

/**
 * Reads rows into an array (see `RowsFile.open`); throws `RowsFileError`
 * with a message naming the file's line.
 */
export function readRows(
  path: string,
  displayName: string,
  ceilings: RowsCeilings = {},
  format: RowsFormat = {},
): Row[] {
  const rows: Row[] = [];
  RowsFile.open(path, displayName, ceilings, format).forEach((row) => {
    rows.push(row);
  });
  return rows;
}

function sourceOf(
  path: string,
  bytes: Buffer,
  displayName: string,
  format: RowsFormat,
  maxBytes: number,
): Source {
  const kind = kindOf(path);
  if (kind === 'sheet') return sheetSource(bytes, displayName, format.sheet, maxBytes);
  let text: string;
  try {
    text = decodeText(bytes, format.encoding);
  } catch (error) {
    if (error instanceof TextDecodeProblem)
      throw new RowsFileError(`${displayName} ${error.message}: ${decodeFix(error, format)}`);
    throw error;
  }
  if (kind === 'jsonl') return { kind, text };
  const delimiter =
    format.delimiter === undefined
      ? detectDelimiter(text, /\.tsv$/i.test(path) ? '\t' : ',')
      : format.delimiter === 'tab'
        ? '\t'
        : format.delimiter;
  return { kind, text, delimiter };
}

/** What to do about bytes that did not decode. */
function decodeFix(problem: TextDecodeProblem, format: RowsFormat): string {
  if (problem.looksUtf16)
    return 'set `encoding: utf-16le` (or `utf-16be`) on the step, or save the file as "CSV UTF-8"';
  if (format.encoding !== undefined) return "check the step's `encoding:`";
  return 'if a spreadsheet on Windows saved it, set `encoding: windows-1252` on the step, or save the file as "CSV UTF-8"';
}

/** A workbook sheet as a header and records, checked like a CSV file's. */
function sheetSource(
  bytes: Buffer,
  displayName: string,
  sheet: string | undefined,
  maxBytes: number,
): Source {
  try {
    return { kind: 'sheet', ...readXlsxTable(bytes, sheet, maxBytes) };
  } catch (error) {
    if (error instanceof XlsxProblem) throw new RowsFileError(`${displayName} ${error.message}`);
    throw error;
  }
}

function eachRow(source: Source, displayName: string, onRow: (row: Row) => void): void {
  if (source.kind === 'jsonl') jsonlRows(source.text, displayName, onRow);
  else if (source.kind === 'delimited') csvRows(source.text, source.delimiter, displayName, onRow);
  else {
    for (const record of source.records)
      onRow({ line: record.line, vars: varsOf(source.header, record) });
    if (source.records.length === 0)
      throw new RowsFileError(`${displayName} has a header but no rows`);
  }
}

function varsOf(header: readonly string[], record: CsvRecord): Record<string, TemplateValue> {
  const vars: Record<string, TemplateValue> = {};
  header.forEach((name, i) => {
    vars[name] = record.fields[i] ?? '';
  });
  return vars;
}

function csvRows(
  text: string,
  delimiter: string,
  displayName: string,
  onRow: (row: Row) => void,
): void {
  let count = 0;
  try {
    forEachCsvRow(
      text,
      (record, header) => {
        count++;
        onRow({ line: record.line, vars: varsOf(header, record) });
      },
      delimiter,
    );
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
