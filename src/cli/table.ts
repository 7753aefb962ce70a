/**
 * Plain aligned text tables for people (the `--json` output is for scripts).
 * Every cell goes through `printable`: cells carry what the service returned
 * (a model label, an influencer's name), and a control character in one must
 * not reach the terminal raw.
 */
import { printable } from '../shared/index.js';

export interface TableOptions {
  /** Bold header when true (a TTY without NO_COLOR). */
  readonly color: boolean;
}

export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: TableOptions,
): string {
  header = header.map(printable);
  rows = rows.map((r) => r.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const head = line(header);
  const lines = [options.color ? `\x1b[1m${head}\x1b[0m` : head, ...rows.map(line)];
  return `${lines.join('\n')}\n`;
}

/** `key  value` lines, keys aligned. */
export function renderPairs(raw: readonly (readonly [string, string])[]): string {
  const pairs = raw.map(([k, v]) => [printable(k), printable(v)] as const);
  const width = Math.max(...pairs.map(([k]) => k.length));
  return `${pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')}\n`;
}

/** A value as short readable text. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
