import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTILE_OUTPUT_SEGMENT } from '../../src/emulator/generations.js';
import { readManifest } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { emulatorEnv, tempDir } from '../helpers/index.js';
import {
  emulators,
  FIXTURES,
  fetchBytes,
  runJobCli,
  sha256,
  walk,
} from './fixtures/pipeline/helpers.js';

const digestOf = (file: string) => (existsSync(file) ? sha256Hex(readFileSync(file)) : null);

describe('path escapes', () => {
  it('hostile output URLs and template values stay inside the output folder', async () => {
    const em = await emulators({ behaviour: { outputUrlStyle: 'hostile' } });
    const dir = tempDir('path-escape');
    const job = path.join(dir, 'job.yaml');
    writeFileSync(job, readFileSync(path.join(FIXTURES, 'hostile.yaml')));
    const names = [
      '../../etc/passwd',
      path.join(dir, 'escaped-abs'),
      `${dir}/job.yaml`,
      'nul\u0000byte/../../x',
      'a'.repeat(5000),
      '..',
    ];
    writeFileSync(
      path.join(dir, 'rows.jsonl'),
      `${names.map((name) => JSON.stringify({ name })).join('\n')}\n`,
    );

    const before = walk(dir);
    const contents = new Map(before.map((f) => [f, digestOf(path.join(dir, f))]));
    const passwd = digestOf('/etc/passwd');

    const result = await runJobCli(job, emulatorEnv(em));
    expect(result.code, result.stdout + result.stderr).toBe(0);

    // Nothing new outside work/out/ but the journal folder; nothing changed.
    const added = walk(dir).filter((f) => !before.includes(f));
    const outside = added.filter((f) => !f.startsWith('work/out/') && !f.startsWith('.ibatch/'));
    expect(outside).toEqual(['work/']);
    for (const [file, digest] of contents)
      expect(digestOf(path.join(dir, file)), file).toBe(digest);
    expect(digestOf('/etc/passwd')).toBe(passwd);

    // Every output was downloaded (from the hostile URL) to a file inside out/.
    const out = path.join(dir, 'work', 'out');
    const rows = readManifest(out);
    expect(rows).toHaveLength(names.length * 2);
    const files = new Set<string>();
    for (const row of rows) {
      expect(row.status).toBe('succeeded');
      expect(row.url).toContain(HOSTILE_OUTPUT_SEGMENT);
      const file = row.file ?? '';
      expect(path.isAbsolute(file)).toBe(false);
      expect(file.split('/')).not.toContain('..');
      expect(file).not.toContain('\u0000');
      for (const segment of file.split('/')) {
        expect(Buffer.byteLength(segment), segment.slice(0, 40)).toBeLessThanOrEqual(255);
      }
      const absolute = path.resolve(out, file);
      expect(absolute.startsWith(`${out}${path.sep}`)).toBe(true);
      // The file is the served bytes plus embedded provenance; its sidecar says which bytes were served.
      expect(sha256(readFileSync(absolute))).toBe(row.sha256);
      const sidecar = JSON.parse(readFileSync(`${absolute}.json`, 'utf8'));
      expect(sidecar.servedSha256).toBe(sha256(await fetchBytes(row.url ?? '')));
      files.add(file);
    }
    // No two outputs were written to the same file.
    expect(files.size).toBe(rows.length);
  }, 40_000);
});
