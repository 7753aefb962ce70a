/**
 * Adoption (a lost journal, the manifest says what is done) takes only files
 * the run wrote: a forged manifest row naming a hard link to another file,
 * with that file's real sha256, passes the path guard and the hash check, so
 * a file with more than one name is not adopted; its item is made again.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/shared/index.js';
import {
  csvJob,
  expectFilesIntact,
  manifest,
  ROWS,
  run,
  SCALE,
  writeRows,
} from '../cli/csv-job.js';
import { said, tempDir, testEmulator } from '../helpers/index.js';
import { charges, workspace } from './helpers.js';

describe('adoption refuses hard links', () => {
  it('a forged row naming a hard-linked file with its real sha256: that item is made again, the others adopted', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('adopt-hard-link'));
    writeRows(ws, ROWS);
    expect((await run(em, ws)).code).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    const rows = manifest(ws);
    const [linked, ...kept] = rows;
    if (!linked?.file) throw new Error('no output');

    const outside = path.join(tempDir('adopt-outside'), 'passwd');
    writeFileSync(outside, 'root:x:0:0:root:/root:/bin/bash\n');
    const target = path.join(ws.dir, 'out', linked.file);
    rmSync(target);
    linkSync(outside, target);
    const manifestPath = path.join(ws.dir, 'out', 'manifest.jsonl');
    const lines = readFileSync(manifestPath, 'utf8').split('\n');
    const at = lines.findIndex((line) => line.includes(`"file":${JSON.stringify(linked.file)}`));
    const bytes = readFileSync(outside);
    lines[at] = JSON.stringify({
      ...JSON.parse(lines[at] ?? '{}'),
      sha256: sha256Hex(bytes),
      bytes: bytes.length,
    });
    writeFileSync(manifestPath, lines.join('\n'));
    rmSync(path.join(ws.dir, '.ibatch'), { recursive: true });

    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    expect(said(again)).toMatch(/adopted 2 item\(s\) from manifest\.jsonl/);
    const made = (await charges(em)).slice(3).map((c) => c.idempotencyKey ?? '');
    expect(made).toHaveLength(1);
    expect(made[0]).toContain(linked.item.slice(0, 20));
    expectFilesIntact(ws, kept);
    // The planted link was never replaced or written through.
    expect(readFileSync(outside, 'utf8')).toBe('root:x:0:0:root:/root:/bin/bash\n');
  }, 90_000);
});
