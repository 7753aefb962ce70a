/**
 * Every command that rewrites a folder's manifest says what it waits for when
 * another process holds the manifest's lock: `report`, and `approve` (the
 * decisions' columns; `review` and `reject` write through the same function).
 * A process on this host holds the lock past one quiet log interval, then
 * lets go; the command logs the wait naming the holder, then finishes.
 * Spawned processes need `npm run build`.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { MANIFEST_LOCK } from '../../src/outputs/index.js';
import { WAIT_REPORT_MS } from '../../src/shared/index.js';
import { jsonLogs, runCliCaptured, said, testEmulator } from '../helpers/index.js';
import { envFor, imageJob, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

/** Holds `out`'s manifest lock from another live process until one quiet log interval has passed. */
function holdManifestLock(out: string): number {
  const lock = path.join(out, MANIFEST_LOCK);
  const holder = spawn('sh', ['-c', `sleep ${(WAIT_REPORT_MS + 1500) / 1000}; rm -f "${lock}"`], {
    stdio: 'ignore',
  });
  if (holder.pid === undefined) throw new Error('the holder did not start');
  writeFileSync(
    lock,
    JSON.stringify({ pid: holder.pid, hostname: hostname(), startedAt: Date.now() }),
  );
  return holder.pid;
}

it('report and approve log a wait for the manifest lock, naming its holder, then finish', async () => {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace(imageJob({ name: 'lock-wait', n: 1 }));
  const env = { ...envFor(em, SCALE), IBATCH_LOG_FORMAT: 'json' };
  const made = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
  expect(made.code, said(made)).toBe(0);
  const out = path.join(ws.dir, 'out');
  for (const args of [
    ['report', 'job.yaml'],
    ['approve', 'job.yaml', 'shots/*'],
  ]) {
    const holder = holdManifestLock(out);
    const result = await runCliCaptured(args, env, ws.dir);
    expect(result.code, said(result)).toBe(0);
    const waits = jsonLogs(result.stderr).filter((line) => line.event === 'manifest.waiting');
    expect(waits.length, `${args[0]}: ${said(result)}`).toBeGreaterThanOrEqual(1);
    expect(waits[0]?.msg).toContain(`waiting for the manifest of ${out}`);
    expect(waits[0]?.holder).toEqual({ pid: holder, hostname: hostname() });
  }
}, 60_000);
