/**
 * An output folder that cannot take files is refused before anything is
 * spent: exit 2, one line, no stack, nothing on the ledger. `/proc/self/x`
 * used to spin Node's recursive mkdir at 100% CPU for ever. Spawned
 * processes need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { makeFolderSync } from '../../src/shared/index.js';
import { expectNoStack, spawnCli, testEmulator, until } from '../helpers/index.js';
import { envFor, imageJob, workspace } from '../scheduler/helpers.js';

describe('the output folder is checked before anything is spent', () => {
  it('--out /proc/self/x: exit 2 with one line, nothing charged', async () => {
    const e = await testEmulator({ timeScale: 30 });
    const ws = workspace(imageJob({ name: 'procout', n: 2 }));
    const run = spawnCli(['run', ws.jobPath, '--out', '/proc/self/x'], {
      env: envFor(e, 30),
      cwd: ws.dir,
    });
    // A hang guard: the loop this replaces never ended.
    await until(() => run.child.exitCode !== null, { timeoutMs: 30_000, what: 'the run to end' });
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ibatch: output folder \/proc\/self\/x cannot be made \(ENOENT/);
    expectNoStack(result.stderr);
    expect(await e.admin.ledger(e.accounts[0]!.id)).toEqual([]);
  });

  it('makeFolderSync ends with one error where a parent refuses children', () => {
    expect(() => makeFolderSync('/proc/self/x/y')).toThrow(/ENOENT/);
  });
});
