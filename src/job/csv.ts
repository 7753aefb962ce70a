/**
 * A small RFC 4180 CSV reader and writer: quoted fields, doubled quotes,
 * CRLF or LF line ends, line breaks inside quoted fields, an optional UTF-8
 * BOM, and a header row. Strict: a stray quote or a row with the wrong number
 * of fields is an error with its line, not a guess.
 */
import { EXIT, IbatchError } from '../shared/index.js';

export interface CsvRecord {
  /** 1-based line where the record starts. */
  readonly line: number;
  readonly fields: readonly string[];
}

export interface CsvTable {
  readonly header: readonly string[];
  readonly records: readonly CsvRecord[];
}

/** A malformed CSV file (exit 2: the job's input is invalid). */
export class CsvSyntaxError extends IbatchError {
  constructor(
    message: string,
    readonly line: number,
    readonly col: number,
  ) {
    super('csv_syntax', `line ${line}, column ${col}: ${message}`, EXIT.invalid);
  }
}

/** Splits CSV text into records of fields (no header handling). */
export function parseCsvRecords(input: string): CsvRecord[] {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let col = 1;
  let recordLine = 1;
  let quoted = false; // the current field started with a quote
  let inQuotes = false; // inside the quotes of a quoted field
  let fieldStarted = false;
  let lastFieldWasQuoted = false;
  const endField = () => {
    fields.push(field);
    field = '';
    quoted = false;
    fieldStarted = false;
  };
  const endRecord = () => {
    endField();
    // A blank line is not a record: skip it rather than make an empty row.
    if (!(fields.length === 1 && fields[0] === '' && !lastFieldWasQuoted)) {
      records.push({ line: recordLine, fields });
    }
    fields = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
          col += 2;
          continue;
        }
        inQuotes = false;
        col++;
        continue;
      }
      field += ch;
      if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) {
        line++;
        col = 1;
      } else col++;
      continue;
    }
    if (ch === ',') {
      lastFieldWasQuoted = quoted;
      endField();
      col++;
      continue;
    }
    if (ch === '\r' || ch === '\n') {
      lastFieldWasQuoted = quoted;
      endRecord();
      if (ch === '\r' && text[i + 1] === '\n') i++;
      line++;
      col = 1;
      recordLine = line;
      continue;
    }
    if (ch === '"') {
      if (fieldStarted) throw new CsvSyntaxError('quote inside an unquoted field', line, col);
      quoted = true;
      inQuotes = true;
      fieldStarted = true;
      col++;
      continue;
    }
    if (quoted)
      throw new CsvSyntaxError(`unexpected ${JSON.stringify(ch)} after a closing quote`, line, col);
    field += ch;
    fieldStarted = true;
    col++;
  }
  if (inQuotes) throw new CsvSyntaxError('unterminated quoted field', line, col);
  if (fieldStarted || fields.length > 0) {
    lastFieldWasQuoted = quoted;
    endRecord();
  }
  return records;
}

/** Parses CSV with a header row; every record must have the header's width. */
export function parseCsv(text: string): CsvTable {
  const [head, ...records] = parseCsvRecords(text);
  if (!head) throw new CsvSyntaxError('empty file: expected a header row', 1, 1);
  const header = head.fields.map((name) => name.trim());
  header.forEach((name, index) => {
    if (name === '') throw new CsvSyntaxError(`header column ${index + 1} is empty`, head.line, 1);
    if (header.indexOf(name) !== index) {
      throw new CsvSyntaxError(`header column ${JSON.stringify(name)} appears twice`, head.line, 1);
    }
  });
  for (const record of records) {
    if (record.fields.length !== header.length) {
      throw new CsvSyntaxError(
        `expected ${header.length} fields (as in the header), got ${record.fields.length}`,
        record.line,
        1,
      );
    }
  }
  return { header, records };
}

function quoteField(field: string, alone: boolean): string {
  if (/[",\r\n]/.test(field) || (alone && field === '')) return `"${field.replaceAll('"', '""')}"`;
  return field;
}

/** Writes records as RFC 4180 CSV (CRLF line ends). */
export function formatCsv(rows: readonly (readonly string[])[]): string {
  return rows
    .map((row) => row.map((field) => quoteField(field, row.length === 1)).join(','))
    .map((line) => `${line}\r\n`)
    .join('');
}
