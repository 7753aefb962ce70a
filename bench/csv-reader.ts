/**
 * The hand-written CSV reader (src/job/csv.ts) beside csv-parse, side by
 * side in one process: a corpus of quirks real spreadsheets and exporters
 * write (what each reader makes of it, and where it says a mistake is), and
 * the time to read a 100,000-row file. docs/job-files.md quotes the figures.
 */
import { parse } from 'csv-parse/sync';
import { CsvSyntaxError, detectDelimiter, formatCsv, parseCsv } from '../src/job/index.js';
import type { Benchmark } from './types.js';

interface Quirk {
  readonly name: string;
  readonly text: string;
}

/** What real files hold; each is read with the delimiter the rows reader detects. */
export const CSV_QUIRKS: readonly Quirk[] = [
  { name: 'quoted line break', text: 'sku,caption\nA1,"two\nlines"\nA2,one\n' },
  { name: 'doubled quotes', text: 'sku,caption\nA1,"5"" screen, ""pro"""\n' },
  { name: 'UTF-8 BOM', text: '\uFEFFsku,caption\nA1,mug\n' },
  { name: 'CRLF line ends', text: 'sku,caption\r\nA1,mug\r\nA2,lamp\r\n' },
  { name: 'no final line end', text: 'sku,caption\nA1,mug' },
  { name: 'trailing delimiter on every line', text: 'sku,caption,\nA1,mug,\n' },
  { name: 'empty lines', text: 'sku,caption\n\nA1,mug\n\n\nA2,lamp\n' },
  { name: 'ragged row (one field too many)', text: 'sku,caption\nA1,mug\nA2,lamp,extra\n' },
  { name: 'ragged row (one field missing)', text: 'sku,caption\nA1,mug\nA2\n' },
  { name: 'stray quote inside a field', text: 'sku,caption\nA1,mug\nA2,5" screen\n' },
  { name: 'text after a closing quote', text: 'sku,caption\nA1,"mug" large\n' },
  { name: 'unterminated quote', text: 'sku,caption\nA1,mug\nA2,"lamp\n' },
  { name: "Excel's semicolon CSV", text: 'sku;caption;price\nA1;Tasse, blanche;4,50\n' },
  { name: 'tab-separated', text: 'sku\tcaption\nA1\tmug, large\n' },
  { name: 'duplicate header', text: 'sku,sku\nA1,A2\n' },
];

/** One reader's answer: its records, or its error and where it puts it. */
type Outcome = { records: string[][] } | { error: string; line: number; column: string };

function handWritten(text: string, delimiter: string): Outcome {
  try {
    const table = parseCsv(text, delimiter);
    return { records: [[...table.header], ...table.records.map((r) => [...r.fields])] };
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    return { error: error.reason, line: error.line, column: `character ${error.col}` };
  }
}

function csvParse(text: string, delimiter: string): Outcome {
  try {
    return { records: parse(text, { bom: true, delimiter, skip_empty_lines: true }) as string[][] };
  } catch (error) {
    const e = error as Error & { code?: string; lines?: number; column?: number };
    return { error: e.code ?? e.message, line: e.lines ?? 0, column: `field ${e.column ?? '?'}` };
  }
}

function describe(outcome: Outcome): string {
  if ('records' in outcome) return `${outcome.records.length} records`;
  return `error at line ${outcome.line}, ${outcome.column}: ${outcome.error}`;
}

/** Each quirk with both readers' answers (a markdown table's rows). */
export function compareCsvReaders(): {
  name: string;
  handWritten: string;
  csvParse: string;
  same: boolean;
}[] {
  return CSV_QUIRKS.map(({ name, text }) => {
    const delimiter = detectDelimiter(text, ',');
    const a = handWritten(text, delimiter);
    const b = csvParse(text, delimiter);
    const same =
      'records' in a && 'records' in b
        ? JSON.stringify(a.records) === JSON.stringify(b.records)
        : 'error' in a && 'error' in b && a.line === b.line;
    return { name, handWritten: describe(a), csvParse: describe(b), same };
  });
}

const ROWS = 100_000;
const RUNS = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function timed(read: () => number): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const records = read();
    times.push(performance.now() - start);
    if (records !== ROWS + 1) throw new Error(`read ${records} records, expected ${ROWS + 1}`);
  }
  return median(times);
}

export const csvReader: Benchmark = async () => {
  // The rows of the job benchmarks (bench/csv-job.ts): quoted fields with commas and quotes.
  const rows = [['sku', 'product', 'setting']];
  for (let i = 0; i < ROWS; i++)
    rows.push([`sku-${i}`, `Product "${i}", deluxe`, `setting ${i % 37}`]);
  const text = formatCsv(rows);
  const hand = timed(() => parseCsv(text).records.length + 1);
  const library = timed(() => (parse(text, { bom: true }) as unknown[]).length);
  const corpus = compareCsvReaders();
  const differ = corpus.filter((c) => !c.same).map((c) => c.name);
  return [
    {
      group: 'csv',
      metric: `read ${ROWS.toLocaleString('en')} rows: src/job/csv.ts`,
      value: hand,
      unit: 'ms',
      note: `median of ${RUNS}`,
    },
    {
      group: 'csv',
      metric: `read ${ROWS.toLocaleString('en')} rows: csv-parse (sync)`,
      value: library,
      unit: 'ms',
      note: `median of ${RUNS}`,
    },
    {
      group: 'csv',
      metric: 'csv-parse time / src/job/csv.ts time',
      value: library / hand,
      unit: 'x',
    },
    {
      group: 'csv',
      metric: `quirk corpus: cases read alike (same records, or an error on the same line)`,
      value: corpus.length - differ.length,
      unit: `of ${corpus.length}`,
      note: differ.length ? `differ: ${differ.join('; ')}` : '',
    },
  ];
};
