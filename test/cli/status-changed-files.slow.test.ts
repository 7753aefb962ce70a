/**
 * `status JOB.yaml` counts an item as changed when a local file it names has
 * new content, as `plan` does (one identity for both: `itemIdentity`). Real
 * `ibatch` processes (`npm run build` first) against the emulator.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngFor } from '../../src/emulator/index.js';
import { spawnCli, tempDir, testEmulator } from '../helpers/index.js';
import { envFor } from '../scheduler/helpers.js';

const JOB = [
  'version: 1',
  'name: status-edits',
  'output: out',
  'generations:',
  '  - id: edits',
  '    model: nano-edit',
  '    matrix: { look: [calm] }',
  '    input: { prompt: "{{ look }}", image: ./ref.png }',
  '',
].join('\n');

describe('status after a local file changed', () => {
  it('counts the item naming it as changed, as plan does', async () => {
    const em = await testEmulator();
    const dir = tempDir('status-files');
    writeFileSync(path.join(dir, 'job.yaml'), JOB);
    writeFileSync(path.join(dir, 'ref.png'), pngFor('ref', 8));
    const ibatch = (...args: string[]) => spawnCli(args, { cwd: dir, env: envFor(em, 30) }).exited;
    const run = await ibatch('run', 'job.yaml');
    expect(run.code, run.stderr).toBe(0);
    writeFileSync(path.join(dir, 'ref.png'), pngFor('another ref', 8));
    const plan = await ibatch('plan', 'job.yaml', '--json');
    expect(plan.code, plan.stderr).toBe(0);
    const step = (JSON.parse(plan.stdout) as { steps: Record<string, unknown>[] }).steps[0];
    expect(step).toMatchObject({ id: 'edits', changed: 1 });
    const status = await ibatch('status', 'job.yaml');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(
      'edits: 1 item(s) changed in the job file, made again by the next run',
    );
  });
});
