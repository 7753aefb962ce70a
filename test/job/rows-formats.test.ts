/**
 * Rows as spreadsheets give them: Excel's CSV on Windows (Windows-1252), its
 * semicolon CSV, its UTF-16 "Unicode text", `.tsv` and `.xlsx` give the same
 * items as the UTF-8 CSV; bytes that do not decode are an error at their
 * line and column, never a replaced character.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import writeXlsxFile from 'write-excel-file/node';
import {
  expandJob,
  isJobFileError,
  type JobIssue,
  type JobItem,
  loadJob,
} from '../../src/job/index.js';
import { tempDir } from '../helpers/index.js';
import { emulatorCatalog } from './helpers.js';

const models = emulatorCatalog();

const TABLE = [
  ['sku', 'product', 'setting'],
  ['A001', 'Tasse café', 'on a table'],
  ['A002', 'Écharpe "soie", bleue', 'in a street'],
  ['A003', 'Lampe; laiton', 'on a desk'],
] as const;

function jobYaml(rows: string, extra: readonly string[] = []): string {
  return [
    'version: 1',
    'name: t',
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    `    rows: ${rows}`,
    ...extra.map((line) => `    ${line}`),
    '    input: { prompt: "{{ product }} {{ setting }}" }',
    '',
  ].join('\n');
}

function itemsOf(
  file: string,
  bytes: Uint8Array | string,
  extra: readonly string[] = [],
): JobItem[] {
  const dir = tempDir('rows');
  writeFileSync(join(dir, file), bytes);
  writeFileSync(join(dir, 'job.yaml'), jobYaml(file, extra));
  return [...expandJob(loadJob(join(dir, 'job.yaml')), models).items];
}

function issuesOf(
  file: string,
  bytes: Uint8Array | string,
  extra: readonly string[] = [],
): JobIssue[] {
  try {
    itemsOf(file, bytes, extra);
  } catch (error) {
    if (isJobFileError(error)) return [...error.issues];
    throw error;
  }
  throw new Error('expected the job to be refused');
}

/** What identifies and fills an item: its key and the request it sends. */
function summary(items: readonly JobItem[]) {
  return items.map((item) => ({ key: item.key, input: item.request.input }));
}

function quoted(field: string, delimiter: string): string {
  return /["\r\n]/.test(field) || field.includes(delimiter)
    ? `"${field.replaceAll('"', '""')}"`
    : field;
}

function delimited(delimiter: string, lineEnd = '\r\n'): string {
  return (
    TABLE.map((row) => row.map((f) => quoted(f, delimiter)).join(delimiter)).join(lineEnd) + lineEnd
  );
}

function utf16le(text: string): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
}

function windows1252(text: string): Buffer {
  // Every character of TABLE is in Latin-1, where Windows-1252 agrees.
  return Buffer.from(text, 'latin1');
}

const reference = () => summary(itemsOf('products.csv', delimited(',')));

describe('rows files as spreadsheets save them', () => {
  it('a UTF-8 CSV gives the prompts as written', () => {
    expect(reference().map((i) => i.input.prompt)).toEqual([
      'Tasse café on a table',
      'Écharpe "soie", bleue in a street',
      'Lampe; laiton on a desk',
    ]);
  });

  it('Windows-1252 without `encoding:` is refused at the line and column, with the fix', () => {
    const issues = issuesOf('products.csv', windows1252(delimited(',')));
    expect(issues).toHaveLength(1);
    const [issue] = issues;
    expect(issue?.path).toBe('generations[0].rows');
    expect(`${issue?.line}:${issue?.col}`).toBe('6:11');
    // "Tasse caf" is 9 characters after "A001,": the é is column 15 of line 2.
    expect(issue?.message).toContain('products.csv line 2, column 15: byte 0xE9');
    expect(issue?.message).toContain('`encoding: windows-1252`');
    expect(issue?.message).toContain('"CSV UTF-8"');
  });

  it('Windows-1252 with `encoding: windows-1252` gives the same items as UTF-8', () => {
    const items = itemsOf('products.csv', windows1252(delimited(',')), ['encoding: windows-1252']);
    expect(summary(items)).toEqual(reference());
  });

  it("Excel's semicolon CSV gives the same items (the delimiter is detected)", () => {
    expect(summary(itemsOf('products.csv', delimited(';')))).toEqual(reference());
  });

  for (const file of ['products.tsv', 'products.txt', 'products.csv']) {
    it(`UTF-16 LE with a BOM, tab-separated, as ${file}, gives the same items`, () => {
      expect(summary(itemsOf(file, utf16le(delimited('\t'))))).toEqual(reference());
    });
  }

  it('UTF-16 BE with a BOM gives the same items', () => {
    const le = Buffer.from(delimited('\t'), 'utf16le');
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(le).swap16()]);
    expect(summary(itemsOf('products.txt', be))).toEqual(reference());
  });

  it('UTF-16 without a BOM is named as such, not read as garbage', () => {
    const text = Buffer.from(delimited('\t'), 'utf16le');
    const [issue] = issuesOf('products.txt', text);
    // The first NUL is the second byte: `s` is column 1.
    expect(issue?.message).toContain('products.txt line 1, column 2');
    expect(issue?.message).toContain('looks like UTF-16 LE without a byte-order mark');
    expect(issue?.message).toContain('`encoding: utf-16le`');
    const items = itemsOf('products.txt', text, ['encoding: utf-16le']);
    expect(summary(items)).toEqual(reference());
  });

  it('`delimiter:` overrides detection', () => {
    // `|` is never detected (read with `,`, a quoted field runs on); said, it reads the file.
    expect(issuesOf('products.csv', delimited('|'))[0]?.message).toContain(
      'quote inside an unquoted field',
    );
    expect(summary(itemsOf('products.csv', delimited('|'), ['delimiter: "|"']))).toEqual(
      reference(),
    );
    // A semicolon file read with the `,` it was told: one column, named `sku;product;setting`.
    const told = issuesOf('products.csv', 'sku;product;setting\nA001;mug;on a table\n', [
      'delimiter: ","',
    ]);
    expect(told[0]?.message).toContain('sku;product;setting');
  });

  it('`delimiter: tab` reads a tab-separated .csv', () => {
    const items = itemsOf('products.csv', delimited('\t'), ['delimiter: tab']);
    expect(summary(items)).toEqual(reference());
  });

  it('an .xlsx written by a spreadsheet library gives the same items; `sheet:` picks one', async () => {
    const cells = TABLE.map((row) => row.map((value) => ({ value })));
    const bytes = await writeXlsxFile([
      { sheet: 'Notes', data: [[{ value: 'nothing here' }]] },
      { sheet: 'Products', data: cells },
    ]).toBuffer();
    const single = await writeXlsxFile(cells).toBuffer();
    expect(summary(itemsOf('products.xlsx', single))).toEqual(reference());
    expect(summary(itemsOf('products.xlsx', bytes, ['sheet: Products']))).toEqual(reference());
    const [unknown] = issuesOf('products.xlsx', bytes, ['sheet: Produkte']);
    expect(unknown?.path).toBe('generations[0].rows');
    expect(unknown?.message).toContain('has no sheet "Produkte" (its sheets: "Notes", "Products")');
  });

  it('format keys that do not fit the file are reported at their own key', () => {
    const issues = issuesOf('products.csv', delimited(','), ['sheet: Products']);
    expect(issues.map((i) => [i.path, i.message])).toEqual([
      ['generations[0].sheet', '`sheet:` applies to .xlsx rows files'],
    ]);
    const unknown = issuesOf('products.csv', delimited(','), ['encoding: klingon']);
    expect(unknown[0]?.path).toBe('generations[0].encoding');
  });

  it('syntax errors keep their rows-file line and column', () => {
    const [stray] = issuesOf('products.csv', 'sku;product\nA001;5" screen\n');
    expect(stray?.message).toBe('products.csv line 2, column 7: quote inside an unquoted field');
    const [ragged] = issuesOf('products.tsv', 'sku\tproduct\nA001\tmug\textra\n');
    expect(ragged?.message).toBe(
      'products.tsv line 2, column 1: expected 2 fields (as in the header), got 3',
    );
  });
});

describe('job files saved as UTF-16', () => {
  const yaml = jobYaml('products.csv').replace('{{ product }}', 'Café {{ product }}');

  function load(bytes: Buffer) {
    const dir = tempDir('rows');
    writeFileSync(join(dir, 'products.csv'), delimited(','));
    writeFileSync(join(dir, 'job.yaml'), bytes);
    return loadJob(join(dir, 'job.yaml'));
  }

  it('a UTF-16 job file with a byte-order mark is read', () => {
    const job = load(utf16le(yaml));
    expect(job.steps[0]?.input).toEqual({ prompt: 'Café {{ product }} {{ setting }}' });
  });

  it('a job file that is not UTF-8 is refused at the byte, not read as garbage', () => {
    let issues: JobIssue[] = [];
    try {
      load(windows1252(yaml));
    } catch (error) {
      if (isJobFileError(error)) issues = [...error.issues];
    }
    expect(issues.map((i) => [i.line, i.col, i.message])).toEqual([
      [
        7,
        26,
        'job file: byte 0xE9 is not UTF-8: save it as UTF-8 (YAML is UTF-8 or UTF-16 with a byte-order mark)',
      ],
    ]);
  });
});
