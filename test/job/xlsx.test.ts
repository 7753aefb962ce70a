/**
 * The `.xlsx` reader: cells as the text a template gets (numbers, dates,
 * booleans, rich and inline strings), a workbook written with namespace
 * prefixes, and its refusals at the sheet's row and column.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { globSync } from 'tinyglobby';
import { describe, expect, it } from 'vitest';
import writeXlsxFile from 'write-excel-file/node';
import { readXlsxTable, XlsxProblem } from '../../src/job/xlsx.js';
import { elements } from '../../src/job/xml-scan.js';
import { DIST, REPO, tempDir } from '../helpers/index.js';

const MAX = 2 ** 20;

function problemOf(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    if (error instanceof XlsxProblem) return error.message;
    throw error;
  }
  throw new Error('expected an XlsxProblem');
}

/** A minimal workbook as another writer lays it out: `x:` prefixes, inline strings, Excel's escapes. */
function handMadeWorkbook(sheetXml: string): Uint8Array {
  const ns = 'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  return zipSync({
    'xl/workbook.xml': strToU8(
      `<?xml version="1.0"?><x:workbook ${ns} ${rel}><x:workbookPr date1904="1"/><x:sheets><x:sheet name="Données &amp; prix" sheetId="1" r:id="rId7"/></x:sheets></x:workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': strToU8(
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId7" Type="worksheet" Target="/xl/worksheets/data.xml"/></Relationships>',
    ),
    'xl/sharedStrings.xml': strToU8(
      `<?xml version="1.0"?><x:sst ${ns}><x:si><x:t>sku</x:t></x:si><x:si><x:r><x:t xml:space="preserve">Tasse </x:t></x:r><x:r><x:rPr/><x:t>café</x:t></x:r></x:si></x:sst>`,
    ),
    'xl/styles.xml': strToU8(
      `<?xml version="1.0"?><x:styleSheet ${ns}><x:cellXfs><x:xf numFmtId="0"/><x:xf numFmtId="14"/></x:cellXfs></x:styleSheet>`,
    ),
    'xl/worksheets/data.xml': strToU8(
      `<?xml version="1.0"?><x:worksheet ${ns}><x:sheetData>${sheetXml}</x:sheetData></x:worksheet>`,
    ),
  });
}

describe('readXlsxTable', () => {
  it('gives numbers, dates and booleans as a template reads them', async () => {
    const bytes = await writeXlsxFile([
      [{ value: 'sku' }, { value: 'price' }, { value: 'launch' }, { value: 'new' }],
      [
        { value: 'A1' },
        { value: 0.1 },
        { value: new Date('2026-03-01T00:00:00Z'), format: 'dd/mm/yyyy' },
        { value: true },
      ],
      [{ value: 'A2' }, { value: 12 }, null, { value: false }],
    ]).toBuffer();
    expect(readXlsxTable(bytes, undefined, MAX)).toEqual({
      header: ['sku', 'price', 'launch', 'new'],
      records: [
        { line: 2, fields: ['A1', '0.1', '2026-03-01', 'true'] },
        { line: 3, fields: ['A2', '12', '', 'false'] },
      ],
    });
  });

  it('reads prefixed XML, rich and inline strings, escapes and the 1904 date system', () => {
    const workbook = handMadeWorkbook(
      '<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c><x:c r="B1" t="inlineStr"><x:is><x:t>caption</x:t></x:is></x:c><x:c r="C1" t="inlineStr"><x:is><x:t>day</x:t></x:is></x:c></x:row>' +
        '<x:row r="3"><x:c r="A3" t="str"><x:v>A&amp;1</x:v></x:c><x:c r="B3" t="s"><x:v>1</x:v></x:c><x:c r="C3" s="1"><x:v>0</x:v></x:c></x:row>' +
        '<x:row r="4"><x:c r="A4" t="inlineStr"><x:is><x:t>two_x000D_\nlines</x:t></x:is></x:c></x:row>',
    );
    expect(readXlsxTable(workbook, 'Données & prix', MAX)).toEqual({
      header: ['sku', 'caption', 'day'],
      records: [
        // Row 2 is absent from the sheet: the line numbers are the sheet's.
        { line: 3, fields: ['A&1', 'Tasse café', '1904-01-01'] },
        { line: 4, fields: ['two\r\nlines', '', ''] },
      ],
    });
  });

  it('refuses a formula error, a value without a header, an unknown sheet and a non-workbook', () => {
    const header = '<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c></x:row>';
    expect(
      problemOf(() =>
        readXlsxTable(
          handMadeWorkbook(`${header}<x:row r="2"><x:c r="A2" t="e"><x:v>#N/A</x:v></x:c></x:row>`),
          undefined,
          MAX,
        ),
      ),
    ).toBe(
      'sheet "Données & prix" cell A2 holds the error #N/A: fix the formula or clear the cell',
    );
    expect(
      problemOf(() =>
        readXlsxTable(
          handMadeWorkbook(
            `${header}<x:row r="2"><x:c r="A2" t="str"><x:v>x</x:v></x:c><x:c r="C2" t="str"><x:v>y</x:v></x:c></x:row>`,
          ),
          undefined,
          MAX,
        ),
      ),
    ).toBe('sheet "Données & prix" row 2, column C: a value in a column without a header');
    expect(problemOf(() => readXlsxTable(handMadeWorkbook(header), 'Prices', MAX))).toBe(
      'has no sheet "Prices" (its sheets: "Données & prix")',
    );
    expect(problemOf(() => readXlsxTable(strToU8('sku,product\n'), undefined, MAX))).toMatch(
      /^is not an \.xlsx workbook/,
    );
    expect(problemOf(() => readXlsxTable(handMadeWorkbook(header), undefined, 100))).toMatch(
      /^its part xl\/.* is larger than 100 bytes unzipped$/,
    );
  });
});

describe('the zip library', () => {
  it('is loaded only when an .xlsx is read (needs `npm run build`)', async () => {
    const dir = tempDir('xlsx');
    writeFileSync(join(dir, 'rows.csv'), 'n\n1\n');
    writeFileSync(
      join(dir, 'rows.xlsx'),
      await writeXlsxFile([[{ value: 'n' }], [{ value: 1 }]]).toBuffer(),
    );
    const script = `
      import { createRequire } from 'node:module';
      const { readRows } = await import(${JSON.stringify(join(DIST, 'job', 'rows.js'))});
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => /fflate/.test(f)).length > 0;
      readRows(${JSON.stringify(join(dir, 'rows.csv'))}, 'rows.csv');
      const afterCsv = loaded();
      readRows(${JSON.stringify(join(dir, 'rows.xlsx'))}, 'rows.xlsx');
      console.log(JSON.stringify({ afterCsv, afterXlsx: loaded() }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ afterCsv: false, afterXlsx: true });
    // An ESM import would load it without the require cache knowing: none may exist.
    const eager = globSync('src/**/*.ts', { cwd: REPO }).filter((file) =>
      /^import (?!type)[^;]*from 'fflate'/m.test(readFileSync(join(REPO, file), 'utf8')),
    );
    expect(eager).toEqual([]);
  });
});

describe('the XML scan', () => {
  it('reads attributes holding `>`, any prefix, and character references', () => {
    const xml = `<a:numFmts><a:numFmt numFmtId="164" formatCode='[>=100]0;"&lt;x&gt;"'/><numFmt numFmtId="165" formatCode="d&#233;&#xE9;"></numFmt><numFmtx numFmtId="9"/></a:numFmts>`;
    expect(Array.from(elements(xml, 'numFmt'), (e) => e.attrs)).toEqual([
      { numFmtId: '164', formatCode: '[>=100]0;"<x>"' },
      { numFmtId: '165', formatCode: 'déé' },
    ]);
  });
});
