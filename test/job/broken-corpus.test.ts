/**
 * The corpus of broken job files: each must fail `ibatch validate` with exit
 * 2, naming the expected `line:col` and key, and none may spend a credit
 * (checked on the emulator's ledger).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorEnv, repoPath, runCliCaptured, tempCopy, testEmulator } from '../helpers/index.js';

const FIXTURES = repoPath('test', 'job', 'fixtures', 'broken');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<
  string,
  { at: string; path: string }
>;

describe('broken job files', () => {
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  beforeAll(async () => {
    emulator = await testEmulator();
    env = emulatorEnv(emulator);
    dir = tempCopy(FIXTURES, 'job');
  });

  it('has at least 30 cases', () => {
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(30);
  });

  for (const [name, want] of Object.entries(expected)) {
    it(`${name}: exit 2 at ${want.at} ${want.path || '(root)'}`, async () => {
      const file = `${name}.yaml`;
      const run = await runCliCaptured(['validate', file], env, dir);
      expect(run.code, run.stderr).toBe(2);
      const prefix = `${file}:${want.at}  ${want.path || '(root)'}  `;
      expect(
        run.stderr.split('\n').some((line) => line.startsWith(prefix)),
        run.stderr,
      ).toBe(true);
      expect(run.stderr).not.toContain(env.IBATCH_API_KEY);
    });
  }

  it('spent nothing while validating the whole corpus', async () => {
    expect(await emulator.admin.ledger()).toEqual([]);
  });
});
