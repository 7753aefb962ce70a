/**
 * An output folder that cannot take files is refused before anything is
 * spent: exit 2, one line, no stack, nothing on the ledger. `/proc/self/x`
 * used to spin Node's recursive mkdir at 100% CPU for ever. Spawned
 * processes need `npm run build`.
 */
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertWritableFolder, OutputFolderError } from '../../src/outputs/index.js';
import { makeFolderSync } from '../../src/shared/index.js';
import { expectNoStack, spawnCli, tempDir, testEmulator, until } from '../helpers/index.js';
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

  it('assertWritableFolder: a file, a path through a file and a dangling link are OutputFolderErrors (exit 2)', () => {
    const dir = tempDir('outfolder');
    writeFileSync(path.join(dir, 'afile'), 'x');
    symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));
    const cases: Array<[string, RegExp]> = [
      ['afile', /is not a folder/],
      ['afile/sub', /cannot be made \(ENOTDIR/],
      ['dangling', /cannot be (made|used) \(ENOENT/],
    ];
    for (const [name, message] of cases) {
      const error = (() => {
        try {
          assertWritableFolder(path.join(dir, name));
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, name).toBeInstanceOf(OutputFolderError);
      expect((error as OutputFolderError).exitCode).toBe(2);
      expect((error as Error).message, name).toMatch(message);
    }
    // A folder that is itself a link is fine; a missing one is made.
    mkdirSync(path.join(dir, 'real'));
    symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    assertWritableFolder(path.join(dir, 'link'));
    assertWritableFolder(path.join(dir, 'new', 'deeper'));
    expect(readdirSync(path.join(dir, 'new'))).toEqual(['deeper']);
    expect(readdirSync(path.join(dir, 'real'))).toEqual([]);
  });
});
