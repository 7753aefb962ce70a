/**
 * Reads a step's `rows:` file (CSV with a header row, or JSONL) into one set
 * of template values per row, keeping each row's line for messages.
 */
import { readFileSync } from 'node:fs';
import { EXIT, IbatchError } from '../shared/index.js';
import { CsvSyntaxError, forEachCsvRow } from './csv.js';
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

/** Reads rows; throws `RowsFileError` with a message naming the file's line. */
export function readRows(path: string, displayName: string): Row[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RowsFileError(
      code === 'ENOENT'
        ? `rows file ${displayName} does not exist`
        : `cannot read rows file ${displayName} (${code})`,
    );
  }
  return /\.csv$/i.test(path) ? csvRows(text, displayName) : jsonlRows(text, displayName);
}

function csvRows(text: string, displayName: string): Row[] {
  const rows: Row[] = [];
  try {
    forEachCsvRow(text, (record, header) => {
      const vars: Record<string, TemplateValue> = {};
      header.forEach((name, i) => {
        vars[name] = record.fields[i] ?? '';
      });
      rows.push({ line: record.line, vars });
    });
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new RowsFileError(`${displayName} ${error.message}`);
    throw error;
  }
  if (rows.length === 0) throw new RowsFileError(`${displayName} has a header but no rows`);
  return rows;
}

function jsonlRows(text: string, displayName: string): Row[] {
  const rows: Row[] = [];
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
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
    rows.push({ line, vars });
  });
  if (rows.length === 0) throw new RowsFileError(`${displayName} has no rows`);
  return rows;
}
