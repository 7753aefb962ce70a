/**
 * Rows from a CSV that Excel on Windows saved (Windows-1252) as a user runs
 * them: without `encoding:` the run stops before anything is spent, naming
 * the file, line, column and the fix; with it, the prompt the service
 * receives reads `café`. The same for UTF-16 ("Unicode text") job and rows
 * files, read with a byte-order mark and named without one. An `.xlsx` runs through the built CLI process (its
 * reader is loaded only then).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import writeXlsxFile from 'write-excel-file/node';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { said, spawnCli, testEmulator } from '../helpers/index.js';
import { charges, envFor, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

function job(rows: string, extra: readonly string[] = []): string {
  return [
    'version: 1',
    'name: cafe',
    'output: out',
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    `    rows: ${rows}`,
    ...extra.map((line) => `    ${line}`),
    '    input:',
    '      prompt: "{{ product }} on a table"',
    '',
  ].join('\n');
}

/** The prompts the service holds for the account, oldest first (its own history endpoint). */
async function servicePrompts(em: RunningEmulator): Promise<string[]> {
  const response = await fetch(`${em.baseUrl}/generations?kind=image&limit=50`, {
    headers: { authorization: `Bearer ${em.accounts[0]?.apiKey}` },
  });
  const body = (await response.json()) as { generations: { prompt: string }[] };
  return body.generations.map((g) => g.prompt).reverse();
}

async function run(em: RunningEmulator, dir: string) {
  return spawnCli(['run', 'job.yaml'], { cwd: dir, env: envFor(em, SCALE) }).exited;
}

describe('rows as spreadsheets give them, through `ibatch run`', () => {
  it('a Windows-1252 CSV: exit 2 with line, column and fix, nothing spent; with `encoding:`, the service gets café', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(job('products.csv'));
    // `Tasse café` as Excel on Windows saves it: é is the single byte 0xE9.
    writeFileSync(
      path.join(ws.dir, 'products.csv'),
      Buffer.from('sku,product\r\nA1,Tasse café\r\n', 'latin1'),
    );

    const refused = await run(em, ws.dir);
    expect(refused.code, said(refused)).toBe(2);
    expect(refused.stderr).toContain('job.yaml:7:11');
    expect(refused.stderr).toContain('products.csv line 2, column 13: byte 0xE9 is not UTF-8');
    expect(refused.stderr).toContain('`encoding: windows-1252`');
    expect(await charges(em)).toEqual([]);

    ws.write(job('products.csv', ['encoding: windows-1252']));
    const done = await run(em, ws.dir);
    expect(done.code, said(done)).toBe(0);
    expect(await servicePrompts(em)).toEqual(['Tasse café on a table']);
  });

  it('UTF-16 as Windows saves "Unicode text": the job file and the rows with a byte-order mark run; without one, exit 2 naming UTF-16 and the fix, nothing spent', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace('');
    const utf16 = (text: string, bom: boolean) =>
      Buffer.concat([Buffer.from(bom ? [0xff, 0xfe] : []), Buffer.from(text, 'utf16le')]);
    const rows = 'sku\tproduct\r\nA1\tTasse café\r\n';
    writeFileSync(path.join(ws.dir, 'products.txt'), utf16(rows, false));
    writeFileSync(ws.jobPath, utf16(job('products.txt'), false));
    const jobRefused = await run(em, ws.dir);
    expect(jobRefused.code, said(jobRefused)).toBe(2);
    expect(jobRefused.stderr).toContain('this looks like UTF-16 LE without a byte-order mark');
    expect(jobRefused.stderr).not.toContain('expected a mapping');

    writeFileSync(ws.jobPath, utf16(job('products.txt'), true));
    const rowsRefused = await run(em, ws.dir);
    expect(rowsRefused.code, said(rowsRefused)).toBe(2);
    expect(rowsRefused.stderr).toContain('products.txt line 1, column 2');
    expect(rowsRefused.stderr).toContain('this looks like UTF-16 LE without a byte-order mark');
    expect(rowsRefused.stderr).toContain('`encoding: utf-16le`');
    expect(rowsRefused.stderr).not.toContain('unknown template variable');
    expect(await charges(em)).toEqual([]);

    writeFileSync(path.join(ws.dir, 'products.txt'), utf16(rows, true));
    const done = await run(em, ws.dir);
    expect(done.code, said(done)).toBe(0);
    expect(await servicePrompts(em)).toEqual(['Tasse café on a table']);
  });

  it('an .xlsx sheet chosen with `sheet:` runs; an unknown sheet is exit 2 naming the sheets', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(job('products.xlsx', ['sheet: Products']));
    const bytes = await writeXlsxFile([
      { sheet: 'Notes', data: [[{ value: 'read me' }]] },
      {
        sheet: 'Products',
        data: [
          [{ value: 'sku' }, { value: 'product' }],
          [{ value: 'A1' }, { value: 'Tasse café' }],
        ],
      },
    ]).toBuffer();
    writeFileSync(path.join(ws.dir, 'products.xlsx'), bytes);

    ws.write(job('products.xlsx', ['sheet: Produkte']));
    const refused = await run(em, ws.dir);
    expect(refused.code, said(refused)).toBe(2);
    expect(refused.stderr).toContain('has no sheet "Produkte" (its sheets: "Notes", "Products")');
    expect(await charges(em)).toEqual([]);

    ws.write(job('products.xlsx', ['sheet: Products']));
    const done = await run(em, ws.dir);
    expect(done.code, said(done)).toBe(0);
    expect(await servicePrompts(em)).toEqual(['Tasse café on a table']);
  });
});
