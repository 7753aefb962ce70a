/**
 * A full disk under the output folder is a full disk, not a network error.
 * The real `ibatch run` writes its outputs onto a 16 KiB tmpfs filled to its
 * last page (mounted in a user + mount namespace with `unshare -rm`, so no
 * root is needed and only the child sees it). Mounted on `out/shots` (the
 * step's folder of the default `filename`), the folder's locks and manifest
 * have room and the first output's write fails with a real ENOSPC after the
 * charge; mounted on `out` itself, the run's first write (its folder lock)
 * fails before anything is spent. The run stops (exit 4, resumable)
 * with "the disk holding OUT is full (ENOSPC). Free space, then run again to
 * resume; nothing was lost."; the journal (on the real disk) keeps the
 * charges, and the resume, with room, downloads everything, one charge per
 * item. Skipped where user namespaces are not allowed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { BIN, cleanEnv, runCliCaptured, runCommand, said, testEmulator } from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;

/**
 * Mounts a 16 KiB tmpfs on $1 (in a private mount namespace) filled to its
 * last page, then runs the rest: every write under $1 fails with ENOSPC.
 */
const ON_FULL_DISK =
  'mount -t tmpfs -o size=16k tmpfs "$1" && head -c 16384 /dev/zero > "$1/filler" && shift && exec "$@"';

const namespaces = spawnSync('unshare', ['-rm', 'true']).status === 0;

describe('a full output disk (needs user namespaces: unshare -rm)', () => {
  it.skipIf(!namespaces)(
    'stops with exit 4 and "the disk holding OUT is full"; the resume completes',
    async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(imageJob({ name: 'disk-full', n: 2 }));
      const out = path.join(ws.dir, 'out');
      const shots = path.join(out, 'shots');
      mkdirSync(shots, { recursive: true });
      const env = envFor(em, SCALE);
      const full = await runCommand(
        'unshare',
        ['-rm', 'sh', '-c', ON_FULL_DISK, 'sh', shots, process.execPath, BIN, 'run', 'job.yaml'],
        { cwd: ws.dir, env: cleanEnv(env), timeoutMs: 60_000 },
      );
      const text = `${full.stdout}\n${full.stderr}`;
      expect(full.code, text).toBe(4);
      expect(text).toContain(
        `the disk holding ${out} is full (ENOSPC). Free space, then run again to resume; nothing was lost.`,
      );
      expect(text).not.toMatch(/failed \(network\)|when the service is reachable|unexpected/);
      const journal = await openJournal(ws.journalPath, { readonly: true });
      try {
        const [run] = journal.listRuns();
        expect(run?.status).toBe('stopped_unreachable');
        expect(journal.listOutputs(run?.runId ?? '', 'downloaded')).toEqual([]);
      } finally {
        journal.close();
      }
      // Outside the namespace the folder is the real, roomy one: space "freed".
      const resumed = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(resumed.code, said(resumed)).toBe(0);
      expectOneChargePerItem(await charges(em), 2);
      const rows = readManifest(out);
      expect(rows.map((row) => row.status)).toEqual(['succeeded', 'succeeded']);
      for (const row of rows) expect(existsSync(path.join(out, row.file ?? ''))).toBe(true);
    },
    90_000,
  );

  it.skipIf(!namespaces)(
    'a folder full from the start stops at its first write, before anything is spent',
    async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(imageJob({ name: 'disk-full-at-start', n: 2 }));
      const out = path.join(ws.dir, 'out');
      mkdirSync(out);
      const full = await runCommand(
        'unshare',
        ['-rm', 'sh', '-c', ON_FULL_DISK, 'sh', out, process.execPath, BIN, 'run', 'job.yaml'],
        { cwd: ws.dir, env: cleanEnv(envFor(em, SCALE)), timeoutMs: 60_000 },
      );
      const text = `${full.stdout}\n${full.stderr}`;
      expect(full.code, text).toBe(4);
      expect(text).toContain(`the disk holding ${out} is full (ENOSPC)`);
      expect(text).not.toMatch(/unexpected|failed \(network\)/);
      expect(await charges(em)).toEqual([]);
    },
    90_000,
  );
});
