/**
 * A run removes the temp files (`.<name>.part-…`) its own job's killed
 * downloads left in the output folder, and leaves every other job's: in a
 * shared folder they may be that job's downloads in progress. Real `ibatch`
 * processes (`npm run build` first) against the emulator.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEDIA_TYPES } from '../../src/contract/media-types.js';
import { partFileTag } from '../../src/outputs/index.js';
import { PartFile } from '../../src/outputs/part-file.js';
import { spawnCli, tempDir, testEmulator } from '../helpers/index.js';
import { envFor } from '../scheduler/helpers.js';

function jobText(name: string): string {
  return [
    'version: 1',
    `name: ${name}`,
    'output: out/shared',
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    '    matrix: { scene: [s1, s2] }',
    `    input: { prompt: "${name} {{ scene }}" }`,
    '',
  ].join('\n');
}

describe('temp files in a shared output folder', () => {
  it("a run removes its job's stale part files and keeps another job's in progress", async () => {
    const em = await testEmulator();
    const dir = tempDir('shared-parts');
    writeFileSync(path.join(dir, 'ja.yaml'), jobText('ja'));
    const shots = path.join(dir, 'out', 'shared', 'shots');
    const png = MEDIA_TYPES.png;
    // jb is downloading (its temp file open); ja was killed mid-download.
    const live = await PartFile.create(path.join(shots, 'jb-s1.png'), png, [], partFileTag('jb'));
    const stale = await PartFile.create(path.join(shots, 'ja-s1.png'), png, [], partFileTag('ja'));
    const livePath = (live as unknown as { tempPath: string }).tempPath;
    const stalePath = (stale as unknown as { tempPath: string }).tempPath;
    expect([existsSync(livePath), existsSync(stalePath)]).toEqual([true, true]);

    const run = await spawnCli(['run', 'ja.yaml'], { cwd: dir, env: envFor(em, 30) }).exited;
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(stalePath)).toBe(false);
    expect(existsSync(livePath)).toBe(true);
    await live.discard();
    await stale.discard();
  });
});
