/**
 * Every mistake of a job file at once. `validate`, `plan` and
 * `run` check a file the same way, so each reports the same complete list in
 * one go, including what the preflight finds on the service (an influencer
 * not on the account) when the file has other mistakes too. Real `ibatch`
 * (runCli) against the emulator over loopback HTTP; nothing may be spent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';
import { envFor, workspace } from '../scheduler/helpers.js';

const JOB = [
  'version: 1',
  'name: many-mistakes',
  'generations:',
  '  - id: portraits',
  '    model: flux-portrait',
  '    influencer: nobody_here',
  '    retires: 3',
  '    input:',
  '      prompt: a portrait',
  '      guidance: high',
  '  - id: stills',
  '    model: sdxl-lyte',
  '    input:',
  '      prompt: "{{ scenery }} at dusk"',
  '',
].join('\n');

/** In file order: the preflight's (line 6) among the file's own. */
const EXPECTED = [
  ['6:17', 'generations[0].influencer', 'influencer `nobody_here` is not on this account'],
  ['7:5', 'generations[0].retires', 'unknown key `retires` (did you mean `retries`?)'],
  ['10:17', 'generations[0].input.guidance', 'expected a number, got "high"'],
  ['12:12', 'generations[1].model', 'unknown model `sdxl-lyte` (did you mean `sdxl-lite`?)'],
  ['14:19', 'generations[1].input.prompt', 'unknown template variable `scenery`'],
] as const;

function issueLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('job.yaml:'));
}

describe('every mistake at once', () => {
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    emulator = await testEmulator();
    env = envFor(emulator, 30);
  });

  const commands: Record<string, readonly string[]> = {
    validate: ['validate', 'job.yaml'],
    plan: ['plan', 'job.yaml'],
    run: ['run', 'job.yaml'],
  };
  for (const [name, args] of Object.entries(commands)) {
    it(`${name} reports the file's mistakes and the preflight's in one list, in file order`, async () => {
      const w = workspace(JOB);
      const result = await runCliCaptured(args, env, w.dir);
      expect(result.code, result.stderr).toBe(2);
      const lines = issueLines(result.stderr);
      expect(lines, result.stderr).toHaveLength(EXPECTED.length);
      EXPECTED.forEach(([at, path, says], i) => {
        expect(lines[i]).toContain(`job.yaml:${at}  ${path}  `);
        expect(lines[i]).toContain(says);
      });
      expect(result.stderr).toContain(`invalid job file (${EXPECTED.length} problems)`);
    });
  }

  it('offline, the file is still checked whole (the preflight needs the service)', async () => {
    const w = workspace(JOB);
    // The contracts are cached beside the job by an online validate first.
    await runCliCaptured(['validate', 'job.yaml'], env, w.dir);
    const result = await runCliCaptured(['validate', 'job.yaml', '--offline'], env, w.dir);
    expect(result.code, result.stderr).toBe(2);
    expect(issueLines(result.stderr).map((line) => line.split('  ')[1])).toEqual(
      EXPECTED.slice(1).map(([, path]) => path),
    );
  });

  it('spent nothing', async () => {
    expect(await emulator.admin.ledger()).toEqual([]);
  });
});
