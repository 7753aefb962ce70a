/**
 * The corpus of broken job files: each must fail `ibatch validate` with exit
 * 2, naming the expected `line:col` and key, and none may spend a credit
 * (checked on the emulator's ledger). A case with `every` lists all of its
 * mistakes: one `validate`, `plan` or `run` must report exactly those, each
 * once, in file order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorEnv, repoPath, runCliCaptured, tempCopy, testEmulator } from '../helpers/index.js';

const FIXTURES = repoPath('test', 'job', 'fixtures', 'broken');
interface Expected {
  readonly at: string;
  readonly path: string;
}
/** Every mistake of one file, in file order, each with words its message must say. */
interface ExpectedAll {
  readonly every: readonly (Expected & { readonly says: string })[];
}
const cases = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<
  string,
  Expected | ExpectedAll
>;
const expected = Object.fromEntries(
  Object.entries(cases).filter((c): c is [string, Expected] => 'at' in c[1]),
);
const complete = Object.entries(cases).filter((c): c is [string, ExpectedAll] => 'every' in c[1]);

/** The `file:line:col  path  message` lines of a report. */
function issueLines(stderr: string, file: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith(`${file}:`));
}

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

  it('has a file with 8 mistakes of every kind', () => {
    expect(complete.some(([, c]) => c.every.length >= 8)).toBe(true);
  });

  // `plan` and `run` check a file as `validate` does: the same list, nothing spent.
  for (const [name, want] of complete) {
    for (const command of ['validate', 'plan', 'run']) {
      it(`${name}: one ${command} reports all ${want.every.length} mistakes once each, in file order`, async () => {
        const file = `${name}.yaml`;
        const run = await runCliCaptured([command, file], env, dir);
        expect(run.code, run.stderr).toBe(2);
        const lines = issueLines(run.stderr, file);
        expect(lines, run.stderr).toHaveLength(want.every.length);
        want.every.forEach((issue, i) => {
          expect(lines[i], run.stderr).toContain(`${file}:${issue.at}  ${issue.path}  `);
          expect(lines[i], run.stderr).toContain(issue.says);
        });
        expect(run.stderr).toContain(`invalid job file (${want.every.length} problems)`);
      });
    }
  }

  it('spent nothing while validating the whole corpus', async () => {
    expect(await emulator.admin.ledger()).toEqual([]);
  });
});
