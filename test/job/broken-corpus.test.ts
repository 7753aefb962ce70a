/**
 * The corpus of broken job files: each must fail `ibatch validate` with exit
 * 2, naming the expected `line:col` and key, and none may spend a credit
 * (checked on the emulator's ledger).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { runIbatch, tempCopy } from './helpers.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'broken');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<
  string,
  { at: string; path: string }
>;

describe('broken job files', () => {
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  let copy: { dir: string; cleanup: () => void };

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    const account = emulator.accounts[0];
    if (!account) throw new Error('emulator without account');
    env = { IBATCH_BASE_URL: emulator.baseUrl, IBATCH_API_KEY: account.apiKey };
    copy = tempCopy(FIXTURES);
  });

  afterAll(async () => {
    await emulator?.stop();
    copy?.cleanup();
  });

  it('has at least 30 cases', () => {
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(30);
  });

  for (const [name, want] of Object.entries(expected)) {
    it(`${name}: exit 2 at ${want.at} ${want.path || '(root)'}`, async () => {
      const file = `${name}.yaml`;
      const run = await runIbatch(['validate', file], { cwd: copy.dir, env });
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
