/**
 * Reads one sheet of an `.xlsx` workbook as rows of cell text. Synchronous,
 * because a job's rows are read inside the (synchronous) expansion of its
 * steps; the zip and XML libraries are loaded only when a workbook is read,
 * so no command pays for them at start-up.
 */
import { createRequire } from 'node:module';
import { type CsvRecord, CsvSyntaxError, checkedHeader } from './csv.js';

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

type XmlNode = Record<string, unknown>;

const require = createRequire(import.meta.url);

function libraries() {
  const { unzipSync } = require('fflate') as typeof import('fflate');
  const { XMLParser } = require('fast-xml-parser') as typeof import('fast-xml-parser');
  const repeated = new Set(['sheet', 'Relationship', 'si', 'r', 'row', 'c', 'xf', 'numFmt']);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    // Writers differ in prefixes (`<x:row>`); the names are what matter.
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    isArray: (name, _path, _leaf, isAttribute) => !isAttribute && repeated.has(name),
  });
  return { unzipSync, parse: (xml: string) => parser.parse(xml) as XmlNode };
}

/**
 * The rows of `sheet` (by name) or of the workbook's first sheet. No part of
 * the workbook larger than `maxPartBytes` once unzipped is inflated (a small
 * zip can claim a huge part).
 */
function readXlsxSheet(bytes: Uint8Array, sheet: string | undefined, maxPartBytes: number): Sheet {
  const { unzipSync, parse } = libraries();
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
  const xml = (name: string): XmlNode | undefined => {
    const part = parts[name];
    return part ? parse(Buffer.from(part).toString('utf8')) : undefined;
  };
  const workbook = child(xml('xl/workbook.xml'), 'workbook');
  if (!workbook) throw new XlsxProblem('is not an .xlsx workbook (no xl/workbook.xml)');
  const sheets = list(child(workbook, 'sheets'), 'sheet');
  const names = sheets.map((s) => String(s.name ?? ''));
  const chosen = sheet === undefined ? sheets[0] : sheets[names.indexOf(sheet)];
  if (!chosen) {
    if (sheet === undefined) throw new XlsxProblem('has no sheets');
    throw new XlsxProblem(
      `has no sheet ${JSON.stringify(sheet)} (its sheets: ${names.map((n) => JSON.stringify(n)).join(', ')})`,
    );
  }
  const name = String(chosen.name ?? '');
  const rels = list(child(xml('xl/_rels/workbook.xml.rels'), 'Relationships'), 'Relationship');
  const target = rels.find((r) => r.Id === chosen.id)?.Target;
  if (typeof target !== 'string')
    throw new XlsxProblem(`sheet ${JSON.stringify(name)} has no part`);
  const path = target.startsWith('/') ? target.slice(1) : `xl/${target}`;
  const worksheet = child(xml(path), 'worksheet');
  if (!worksheet) throw new XlsxProblem(`sheet ${JSON.stringify(name)} has no part ${path}`);
  const context: CellContext = {
    strings: list(child(xml('xl/sharedStrings.xml'), 'sst'), 'si').map(richText),
    dateStyles: dateStyles(child(xml('xl/styles.xml'), 'styleSheet')),
    date1904: isTrue(child(workbook, 'workbookPr')?.date1904),
    sheet: name,
  };
  return { name, rows: sheetRows(worksheet, context) };
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

function sheetRows(worksheet: XmlNode, context: CellContext): SheetRow[] {
  const rows: SheetRow[] = [];
  let line = 0;
  for (const row of list(child(worksheet, 'sheetData'), 'row')) {
    line = Number(row.r ?? line + 1);
    const cells: string[] = [];
    let column = -1;
    for (const cell of list(row, 'c')) {
      column = typeof cell.r === 'string' ? columnIndex(cell.r) : column + 1;
      const text = cellText(cell, context, `${columnName(column)}${line}`);
      while (cells.length < column) cells.push('');
      cells[column] = text;
    }
    rows.push({ line, cells });
  }
  return rows;
}

function cellText(cell: XmlNode, context: CellContext, ref: string): string {
  const value = textOf(cell.v);
  switch (cell.t) {
    case 's':
      return context.strings[Number(value)] ?? '';
    case 'inlineStr':
      return richText(child(cell, 'is') ?? {});
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
      if (context.dateStyles.has(Number(cell.s ?? 0))) return excelDate(number, context.date1904);
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

function dateStyles(styleSheet: XmlNode | undefined): Set<number> {
  const custom = new Map(
    list(child(styleSheet, 'numFmts'), 'numFmt').map((f) => [
      Number(f.numFmtId),
      String(f.formatCode ?? ''),
    ]),
  );
  const isDate = (id: number): boolean => {
    const code = custom.get(id);
    if (code === undefined) return BUILT_IN_DATE_FORMATS.has(id);
    // Quoted text, escapes and [colour]/[locale] sections are not date letters.
    return /[dmyhs]/i.test(code.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, ''));
  };
  const styles = new Set<number>();
  list(child(styleSheet, 'cellXfs'), 'xf').forEach((xf, index) => {
    if (isDate(Number(xf.numFmtId ?? 0))) styles.add(index);
  });
  return styles;
}

/** `<t>` or the runs' `<t>`s of a string item (phonetic `<rPh>` runs left out). */
function richText(item: XmlNode): string {
  if (item.t !== undefined) return unescapeXlsx(textOf(item.t));
  return unescapeXlsx(
    list(item, 'r')
      .map((run) => textOf(run.t))
      .join(''),
  );
}

/** Excel writes characters XML cannot hold as `_xHHHH_` (`_x000D_` for CR). */
function unescapeXlsx(text: string): string {
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

function textOf(node: unknown): string {
  if (node === undefined || node === null) return '';
  if (typeof node === 'object') return textOf((node as XmlNode)['#text']);
  return String(node);
}

function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  const value = node?.[name];
  return value !== null && typeof value === 'object' ? (value as XmlNode) : undefined;
}

function list(node: XmlNode | undefined, name: string): XmlNode[] {
  const value = node?.[name];
  // An element without attributes or children parses as '': it still counts
  // (a style's index is its position).
  if (!Array.isArray(value)) return [];
  return value.map((v) => (v !== null && typeof v === 'object' ? (v as XmlNode) : {}));
}

function isTrue(value: unknown): boolean {
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
