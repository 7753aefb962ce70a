/**
 * Temp files written beside the file they become (a lock, a manifest, a
 * report, a download, a cache): named by the writer's host and pid, so that
 * the litter a SIGKILLed writer leaves can be told from a live writer's file
 * and removed by the next writer of that file.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/** A new temp file's path beside `file`: `.NAME.HOST.PID.RANDOM.tmp`. */
export function tempBeside(file: string): string {
  const name = `.${path.basename(file)}.${hostname()}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  return path.join(path.dirname(file), name);
}

/**
 * Removes the temp files beside `file` whose writers were processes of this
 * host that are gone. A live writer's file and another host's (whose pids
 * cannot be asked about here) are left. Returns how many were removed.
 */
export function removeDeadWritersTemps(file: string): number {
  const folder = path.dirname(file);
  const prefix = `.${path.basename(file)}.${hostname()}.`;
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return 0; // the write itself says what is wrong with its folder
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined || isAlive(Number(pid))) continue;
    rmSync(path.join(folder, name), { force: true });
    removed += 1;
  }
  return removed;
}

/** Whether a process of this host with that pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the pid exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
