/** RFC 4180 CSV: CRLF line ends, fields quoted when they hold `"`, `,`, CR or LF. */

/**
 * Cells that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR
 * first) get a leading `'` (OWASP "CSV injection"): a prompt or a server error
 * message must not execute in someone's spreadsheet. Spreadsheets also trim
 * leading spaces and read the full-width forms (`＝＋－＠`) as the ASCII ones,
 * so those count too. Numbers are not touched.
 */
const FORMULA_START = /^[\t\r]|^[\p{Zs}\t\r\n]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]/u;

export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  let text = typeof value === 'string' ? value : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
