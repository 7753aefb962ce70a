/**
 * The two manifest files as documents: `manifest.jsonl` and `manifest.csv`
 * (with a UTF-8 BOM, one column per template variable), each row checked
 * and redacted on its way to the disk, written whole and atomically.
 */
import path from 'node:path';
import { redactDeep } from '../shared/index.js';
import { csvLine } from './csv.js';
import { AtomicFileSync } from './fs-durable.js';
import {
  type ManifestCsvColumn,
  type ManifestRow,
  ManifestRowSchema,
  manifestCsvColumns,
} from './manifest-row.js';

/**
 * A row validated, with every text redacted: errors and URLs can quote the
 * service, and this is the last stop before the disk.
 */
export function checkedRow(input: ManifestRow): ManifestRow {
  return redactDeep(ManifestRowSchema.parse(input));
}

export const MANIFEST_JSONL = 'manifest.jsonl';
export const MANIFEST_CSV = 'manifest.csv';

/** Makes Excel read the CSV as UTF-8; other readers skip it. */
const UTF8_BOM = '\uFEFF';

/**
 * The two manifest documents for `rows`, each row checked and redacted first
 * (`checkedRow`): what the writer and `ibatch export` write.
 */
export function renderManifest(rows: readonly ManifestRow[]): { jsonl: string; csv: string } {
  return renderCheckedManifest(rows.map(checkedRow));
}

function renderCheckedManifest(checked: readonly ManifestRow[]): { jsonl: string; csv: string } {
  return {
    jsonl: checked.map((r) => `${JSON.stringify(r)}\n`).join(''),
    csv: renderManifestCsv(checked),
  };
}

/**
 * Writes both files of checked `rows` in one pass, each atomically (temp,
 * fsync, rename, folder fsync; the JSONL first), a megabyte at a time.
 */
export function writeManifestFiles(
  dir: string,
  rows: Iterable<ManifestRow>,
  columns: readonly ManifestCsvColumn[],
): void {
  const jsonl = new AtomicFileSync(path.join(dir, MANIFEST_JSONL));
  let csv: AtomicFileSync;
  try {
    csv = new AtomicFileSync(path.join(dir, MANIFEST_CSV));
  } catch (error) {
    jsonl.abort();
    throw error;
  }
  try {
    csv.write(csvHeadOf(columns));
    for (const row of rows) {
      jsonl.write(`${JSON.stringify(row)}\n`);
      csv.write(csvRecordOf(columns, row));
    }
  } catch (error) {
    jsonl.abort();
    csv.abort();
    throw error;
  }
  try {
    jsonl.commit();
  } catch (error) {
    csv.abort();
    throw error;
  }
  csv.commit();
}

/** The whole CSV document for `rows`: the BOM, the header, the rows. */
function renderManifestCsv(rows: readonly ManifestRow[]): string {
  const columns = manifestCsvColumns(rows);
  return csvHeadOf(columns) + rows.map((row) => csvRecordOf(columns, row)).join('');
}

/** How `manifest.csv` starts: the BOM and the header line. */
export function csvHeadOf(columns: readonly ManifestCsvColumn[]): string {
  return UTF8_BOM + csvLine(columns.map((c) => c.header));
}

/** The line of `row` in `manifest.csv`. */
export function csvRecordOf(columns: readonly ManifestCsvColumn[], row: ManifestRow): string {
  return csvLine(columns.map((c) => c.cell(row)));
}
