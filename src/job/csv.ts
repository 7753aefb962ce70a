/**
 * A small RFC 4180 CSV reader and writer: quoted fields, doubled quotes,
 * CRLF or LF line ends, line breaks inside quoted fields, an optional BOM,
 * and a header row; the delimiter is `,` unless told (`;` and tab are what
 * spreadsheets write). Strict: a stray quote or a row with the wrong number
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
    /** What is wrong, without the position. */
    readonly reason: string,
    readonly line: number,
    readonly col: number,
  ) {
    super('csv_syntax', `line ${line}, column ${col}: ${reason}`, EXIT.invalid);
  }
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Splits CSV text into records of fields (no header handling), one record at
 * a time, in file order, keeping none. Fields are slices of the text, never
 * built a character at a time: a 100,000-row file would otherwise hold
 * millions of tiny concatenated strings.
 */
function forEachCsvRecord(
  input: string,
  delimiter: number,
  onRecord: (record: CsvRecord) => void,
): void {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const n = text.length;
  let i = 0;
  let line = 1;
  let lineStart = 0; // index of the current line's first character (col = i - lineStart + 1)
  const fail = (message: string): never => {
    throw new CsvSyntaxError(message, line, i - lineStart + 1);
  };
  while (i < n) {
    const recordLine = line;
    const fields: string[] = [];
    let lastQuoted = false;
    for (;;) {
      if (text.charCodeAt(i) === QUOTE) {
        // Where the quote opened is where the mistake is; the end of the file is not.
        const openLine = line;
        const openCol = i - lineStart + 1;
        i++;
        const from = i;
        let doubled = false;
        for (;;) {
          if (i >= n)
            throw new CsvSyntaxError(
              'unterminated quoted field: the quote that opens here is never closed',
              openLine,
              openCol,
            );
          const c = text.charCodeAt(i);
          if (c === QUOTE) {
            if (text.charCodeAt(i + 1) === QUOTE) {
              doubled = true;
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === LF || (c === CR && text.charCodeAt(i + 1) !== LF)) {
            line++;
            lineStart = i + 1;
          }
          i++;
        }
        const next = text.charCodeAt(i);
        if (i < n && next !== delimiter && next !== CR && next !== LF)
          fail(`unexpected ${JSON.stringify(text[i])} after a closing quote`);
        const value = text.slice(from, i - 1);
        // split/join, not replaceAll: one flat string rather than a rope of its
        // pieces, which is larger, and a rows file's fields are all held while
        // its step expands.
        fields.push(doubled ? value.split('""').join('"') : value);
        lastQuoted = true;
      } else {
        const from = i;
        for (; i < n; i++) {
          const c = text.charCodeAt(i);
          if (c === delimiter || c === CR || c === LF) break;
          if (c === QUOTE) fail('quote inside an unquoted field');
        }
        fields.push(text.slice(from, i));
        lastQuoted = false;
      }
      if (i < n && text.charCodeAt(i) === delimiter) {
        i++;
        continue;
      }
      break;
    }
    if (i < n) {
      // CR, LF or CRLF ends the record.
      if (text.charCodeAt(i) === CR && text.charCodeAt(i + 1) === LF) i++;
      i++;
      line++;
      lineStart = i;
    }
    // A blank line is not a record: skip it rather than make an empty row.
    // `slice` trims the array to its length: `push` leaves room for 16 more fields.
    if (!(fields.length === 1 && fields[0] === '' && !lastQuoted))
      onRecord({ line: recordLine, fields: fields.slice() });
  }
}

/** Parses CSV with a header row; every record must have the header's width. */
export function parseCsv(text: string, delimiter = ','): CsvTable {
  const records: CsvRecord[] = [];
  const header = forEachCsvRow(text, (record) => records.push(record), delimiter);
  return { header, records };
}

/** The delimiters a rows file may use without saying so. */
const DETECTED = [COMMA, SEMICOLON, TAB];

/**
 * The delimiter of CSV text: whichever of `,` `;` tab occurs most often in
 * its header line (outside quotes), `fallback` when none does or on a tie
 * that includes it. A header is the line a spreadsheet writes most plainly
 * (column names, rarely quoted), so it is the one read.
 */
export function detectDelimiter(input: string, fallback: string): string {
  const counts = new Map(DETECTED.map((code) => [code, 0]));
  let quoted = false;
  for (let i = input.charCodeAt(0) === 0xfeff ? 1 : 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c === QUOTE) quoted = !quoted;
    else if (!quoted && (c === CR || c === LF)) break;
    else if (!quoted && counts.has(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const best = Math.max(...counts.values());
  const preferred = fallback.charCodeAt(0);
  if (best === 0 || counts.get(preferred) === best) return fallback;
  return String.fromCharCode(DETECTED.find((code) => counts.get(code) === best) ?? preferred);
}

/**
 * `parseCsv` one record at a time (a large rows file is never held twice):
 * checks the header, then each record's width as it comes, so the first
 * problem in file order is the one reported. Returns the header.
 */
export function forEachCsvRow(
  text: string,
  onRecord: (record: CsvRecord, header: readonly string[]) => void,
  delimiter = ',',
): string[] {
  let header: string[] | undefined;
  forEachCsvRecord(text, delimiter.charCodeAt(0), (record) => {
    if (!header) {
      header = checkedHeader(record);
      return;
    }
    if (record.fields.length !== header.length) {
      throw new CsvSyntaxError(
        `expected ${header.length} fields (as in the header), got ${record.fields.length}`,
        record.line,
        1,
      );
    }
    onRecord(record, header);
  });
  if (!header) throw new CsvSyntaxError('empty file: expected a header row', 1, 1);
  return header;
}

/** The header's names, trimmed; an empty or repeated name is a `CsvSyntaxError`. */
export function checkedHeader(head: CsvRecord): string[] {
  const header = head.fields.map((name) => name.trim());
  header.forEach((name, index) => {
    if (name === '') {
      // A delimiter at the end of every line (some exporters write one) leaves
      // a last column without a name.
      const why =
        index === header.length - 1 && index > 0 ? ' (a delimiter at the end of the line?)' : '';
      throw new CsvSyntaxError(`header column ${index + 1} is empty${why}`, head.line, 1);
    }
    if (header.indexOf(name) !== index) {
      throw new CsvSyntaxError(`header column ${JSON.stringify(name)} appears twice`, head.line, 1);
    }
  });
  return header;
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
