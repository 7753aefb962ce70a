/**
 * Rows from a CSV that Excel on Windows saved (Windows-1252) as a user runs
 * them: without `encoding:` the run stops before anything is spent, naming
 * the file, line, column and the fix; with it, the prompt the service
 * receives reads `café`. An `.xlsx` runs through the built CLI process (its
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
