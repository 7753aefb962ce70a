/**
 * Reads one sheet of an `.xlsx` workbook as rows of cell text. Synchronous,
 * because a job's rows are read inside the (synchronous) expansion of its
 * steps; the zip library is loaded only when a workbook is read, so no
 * command pays for it at start-up. The XML parts are scanned, not parsed
 * into a tree (src/job/xml-scan.ts).
 */
import { createRequire } from 'node:module';
import { type CsvRecord, CsvSyntaxError, checkedHeader } from './csv.js';
import { decodeXmlText, elements, firstElement } from './xml-scan.js';

/** A workbook that cannot be read, or a sheet that is not in it. */
export class XlsxProblem extends Error {}

export interface SheetRow {
  /** The sheet's 1-based row number. */
  readonly line: number;
  /** Cell text by column (A = 0); cells the sheet leaves out are ''. */
  readonly cells: readonly string[];
}

export interface Sheet {
  readonly name: string;
  readonly rows: readonly SheetRow[];
}

const require = createRequire(import.meta.url);

/**
 * The rows of `sheet` (by name) or of the workbook's first sheet. No part of
 * the workbook larger than `maxPartBytes` once unzipped is inflated (a small
 * zip can claim a huge part).
 */
function readXlsxSheet(bytes: Uint8Array, sheet: string | undefined, maxPartBytes: number): Sheet {
  const { unzipSync } = require('fflate') as typeof import('fflate');
  let parts: Record<string, Uint8Array>;
  try {
    parts = unzipSync(bytes, {
      filter: (file) => {
        if (!file.name.startsWith('xl/')) return false;
        if (file.originalSize > maxPartBytes)
          throw new XlsxProblem(
            `its part ${file.name} is larger than ${maxPartBytes} bytes unzipped`,
          );
        return true;
      },
    });
  } catch (error) {
    if (error instanceof XlsxProblem) throw error;
    throw new XlsxProblem(`is not an .xlsx workbook (${(error as Error).message})`);
  }
  const xml = (name: string): string => {
    const part = parts[name];
    return part ? Buffer.from(part).toString('utf8') : '';
  };
  const workbook = xml('xl/workbook.xml');
  if (!firstElement(workbook, 'workbook'))
    throw new XlsxProblem('is not an .xlsx workbook (no xl/workbook.xml)');
  const sheets = [...elements(workbook, 'sheet')].map((e) => e.attrs);
  const names = sheets.map((s) => s.name ?? '');
  const chosen = sheet === undefined ? sheets[0] : sheets[names.indexOf(sheet)];
  if (!chosen) {
    if (sheet === undefined) throw new XlsxProblem('has no sheets');
    throw new XlsxProblem(
      `has no sheet ${JSON.stringify(sheet)} (its sheets: ${names.map((n) => JSON.stringify(n)).join(', ')})`,
    );
  }
  const name = chosen.name ?? '';
  const rels = [...elements(xml('xl/_rels/workbook.xml.rels'), 'Relationship')];
  const target = rels.find((r) => r.attrs.Id === chosen.id)?.attrs.Target;
  if (target === undefined) throw new XlsxProblem(`sheet ${JSON.stringify(name)} has no part`);
  const path = target.startsWith('/') ? target.slice(1) : `xl/${target}`;
  const sheetData = firstElement(xml(path), 'sheetData');
  if (!sheetData) throw new XlsxProblem(`sheet ${JSON.stringify(name)} has no part ${path}`);
  const context: CellContext = {
    strings: Array.from(elements(xml('xl/sharedStrings.xml'), 'si'), (si) => richText(si.body)),
    dateStyles: dateStyles(xml('xl/styles.xml')),
    date1904: isTrue(firstElement(workbook, 'workbookPr')?.attrs.date1904),
    sheet: name,
  };
  return { name, rows: sheetRows(sheetData.body, context) };
}

/**
 * A sheet as a CSV file's header and records, checked like one: the first
 * non-empty row names the columns (empty cells right of it are not
 * columns), empty rows are skipped, a value right of the header is an error.
 */
export function readXlsxTable(
  bytes: Uint8Array,
  sheet: string | undefined,
  maxPartBytes: number,
): { readonly header: readonly string[]; readonly records: readonly CsvRecord[] } {
  const read = readXlsxSheet(bytes, sheet, maxPartBytes);
  const where = `sheet ${JSON.stringify(read.name)}`;
  const [head, ...rest] = read.rows.filter((row) => row.cells.some((cell) => cell.trim() !== ''));
  if (!head) throw new XlsxProblem(`${where} is empty: expected a header row`);
  const named = [...head.cells];
  while (named.length > 0 && named.at(-1)?.trim() === '') named.pop();
  let header: string[];
  try {
    header = checkedHeader({ line: head.line, fields: named });
  } catch (error) {
    if (error instanceof CsvSyntaxError)
      throw new XlsxProblem(`${where} row ${error.line}: ${error.reason}`);
    throw error;
  }
  const records = rest.map((row): CsvRecord => {
    const extra = row.cells.findIndex((cell, i) => i >= header.length && cell.trim() !== '');
    if (extra >= 0)
      throw new XlsxProblem(
        `${where} row ${row.line}, column ${columnName(extra)}: a value in a column without a header`,
      );
    return { line: row.line, fields: header.map((_, i) => row.cells[i] ?? '') };
  });
  return { header, records };
}

interface CellContext {
  readonly strings: readonly string[];
  /** Indexes of cell styles whose number format shows a date or time. */
  readonly dateStyles: ReadonlySet<number>;
  readonly date1904: boolean;
  readonly sheet: string;
}

function sheetRows(sheetData: string, context: CellContext): SheetRow[] {
  const rows: SheetRow[] = [];
  let line = 0;
  for (const row of elements(sheetData, 'row')) {
    line = row.attrs.r === undefined ? line + 1 : Number(row.attrs.r);
    const cells: string[] = [];
    let column = -1;
    for (const cell of elements(row.body, 'c')) {
      column = cell.attrs.r === undefined ? column + 1 : columnIndex(cell.attrs.r);
      const text = cellText(cell.attrs, cell.body, context, `${columnName(column)}${line}`);
      while (cells.length < column) cells.push('');
      cells[column] = text;
    }
    rows.push({ line, cells });
  }
  return rows;
}

function cellText(
  attrs: Readonly<Record<string, string>>,
  body: string,
  context: CellContext,
  ref: string,
): string {
  const value = decodeXmlText(firstElement(body, 'v')?.body ?? '');
  switch (attrs.t) {
    case 's':
      return context.strings[Number(value)] ?? '';
    case 'inlineStr':
      return richText(firstElement(body, 'is')?.body ?? '');
    case 'b':
      return value === '1' ? 'true' : 'false';
    case 'e':
      throw new XlsxProblem(
        `sheet ${JSON.stringify(context.sheet)} cell ${ref} holds the error ${value}: fix the formula or clear the cell`,
      );
    case 'str':
    case 'd':
      return value;
    default: {
      if (value === '') return '';
      const number = Number(value);
      if (context.dateStyles.has(Number(attrs.s ?? 0))) return excelDate(number, context.date1904);
      // Shortest form that reads back as the same number (`0.1`, not `0.10000000000000001`).
      return Number.isFinite(number) ? String(number) : value;
    }
  }
}

/** A serial day number as ISO text: `2026-03-01`, with the time when it has one. */
function excelDate(serial: number, date1904: boolean): string {
  const days = serial + (date1904 ? 1462 : 0) - 25569; // 25569: 1970-01-01 in the 1900 system
  const iso = new Date(Math.round(days * 86_400_000)).toISOString();
  return Number.isInteger(serial) ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}

const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

function dateStyles(styles: string): Set<number> {
  const custom = new Map(
    Array.from(elements(styles, 'numFmt'), (f) => [
      Number(f.attrs.numFmtId),
      f.attrs.formatCode ?? '',
    ]),
  );
  const isDate = (id: number): boolean => {
    const code = custom.get(id);
    if (code === undefined) return BUILT_IN_DATE_FORMATS.has(id);
    // Quoted text, escapes and [colour]/[locale] sections are not date letters.
    return /[dmyhs]/i.test(code.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, ''));
  };
  const result = new Set<number>();
  // Only `cellXfs` numbers a cell's `s`; `cellStyleXfs` holds `xf`s too.
  const cellXfs = firstElement(styles, 'cellXfs')?.body ?? '';
  let index = 0;
  for (const xf of elements(cellXfs, 'xf')) {
    if (isDate(Number(xf.attrs.numFmtId ?? 0))) result.add(index);
    index++;
  }
  return result;
}

/** The text of a string item: its `<t>`s (of its runs), phonetic `<rPh>` runs left out. */
function richText(item: string): string {
  const text = item.includes('rPh')
    ? item.replace(/<(?:[\w.-]+:)?rPh[\s>][\s\S]*?<\/(?:[\w.-]+:)?rPh>/g, '')
    : item;
  return unescapeXlsx(Array.from(elements(text, 't'), (t) => decodeXmlText(t.body)).join(''));
}

/** Excel writes characters XML cannot hold as `_xHHHH_` (`_x000D_` for CR). */
function unescapeXlsx(text: string): string {
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

function isTrue(value: string | undefined): boolean {
  return value === '1' || value === 'true';
}

/** `C5` -> 2. */
function columnIndex(ref: string): number {
  let index = 0;
  for (const char of ref.toUpperCase()) {
    const code = char.charCodeAt(0);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

/** 2 -> `C`. */
function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}
