/**
 * Hostile template values (matrix values, CSV rows) and hostile filename
 * templates never write outside the output folder.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured, tempDir } from '../helpers/index.js';
import { allFiles, emulator, LIMITS } from './helpers.js';

const HOSTILE = [
  '../../../../../../tmp/ibatch-pwned',
  '/etc/ibatch-pwned',
  '..\\\\..\\\\win-pwned',
  'a/../../b',
  '．．／．．／fullwidth',
  'CON',
  '.hidden',
  'nul\\u0000byte',
];

function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

async function runJobText(job: string, extra: Record<string, string> = {}) {
  const em = await emulator();
  const account = em.accounts[0];
  if (!account) throw new Error('no account');
  const dir = tempDir('security');
  const work = path.join(dir, 'work');
  await mkdir(work);
  for (const [name, text] of Object.entries(extra)) await writeFile(path.join(work, name), text);
  const jobPath = path.join(work, 'job.yaml');
  await writeFile(jobPath, job);
  const result = await runCliCaptured(
    ['run', jobPath, '--base-url', em.baseUrl, '--limits', LIMITS],
    { IBATCH_API_KEY: account.apiKey },
    work,
  );
  return { dir, work, result, outDir: path.join(work, 'out', 'escape') };
}

describe('path escapes are blocked', () => {
  it('hostile matrix and CSV values in the filename template stay inside the output folder', async () => {
    const csv = `who\n"../../../../../../tmp/ibatch-pwned-row"\n"/abs/row"\n`;
    const { dir, work, result, outDir } = await runJobText(
      `version: 1
name: escape
generations:
  - id: pics
    model: flux-portrait
    matrix:
      scene: ${JSON.stringify(HOSTILE)}
    filename: "{step}/{scene}/{scene}-{n}.{ext}"
    input:
      prompt: "A woman at {{ scene }}"
  - id: rows
    model: flux-portrait
    rows: people.csv
    filename: "{who}-{n}.{ext}"
    input:
      prompt: "portrait of {{ who }}"
`,
      { 'people.csv': csv },
    );
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    const manifest = (await readFile(path.join(outDir, 'manifest.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { file: string; status: string });
    expect(manifest).toHaveLength(HOSTILE.length + 2);
    for (const row of manifest) {
      expect(row.status).toBe('succeeded');
      expect(isInside(outDir, path.resolve(outDir, row.file)), row.file).toBe(true);
      expect(existsSync(path.join(outDir, row.file))).toBe(true);
    }
    // Nothing but the job's own files beside the output, nothing outside the temp dir.
    expect((await readdir(dir)).sort()).toEqual(['work']);
    expect((await readdir(work)).sort()).toEqual(['.ibatch', 'job.yaml', 'out', 'people.csv']);
    for (const { file } of await allFiles(work)) expect(isInside(work, file)).toBe(true);
    for (const p of ['/tmp/ibatch-pwned', '/tmp/ibatch-pwned-row', '/etc/ibatch-pwned']) {
      expect(existsSync(p), p).toBe(false);
    }
  });

  it.each([
    ['../../outside-{n}.{ext}'],
    ['/tmp/ibatch-abs-{n}.{ext}'],
    ['{step}/../../../outside-{n}.{ext}'],
  ])('a filename template %s writes inside the output folder', async (filename) => {
    const { dir, work, result, outDir } = await runJobText(`version: 1
name: escape
generations:
  - id: pics
    model: flux-portrait
    filename: ${JSON.stringify(filename)}
    input:
      prompt: "A woman"
`);
    // Sanitised, not refused: `..` segments and a leading `/` lose their meaning.
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['work']);
    for (const { file } of await allFiles(work)) expect(isInside(work, file)).toBe(true);
    const outputs = (await allFiles(outDir)).filter(({ file }) => file.endsWith('.png'));
    expect(outputs).toHaveLength(1);
    for (const { file } of outputs) expect(isInside(outDir, file), file).toBe(true);
    expect(existsSync('/tmp/ibatch-abs-1.png')).toBe(false);
  });
});
