/**
 * One runner per job across machines: a session advisory lock of the
 * journal's connection, keyed by the schema and the job. It dies with its
 * holder's connection: a SIGKILLed runner's lock is gone as soon as the
 * server sees its connection close (at once for a process killed on a live
 * machine; after the server's TCP keepalive for a machine that vanished).
 * The holder names itself in `ibatch_job_locks` (created with the journal,
 * migrate.ts) so a refusal can say who
 * holds the job (host, pid, since); that row is only a name tag, the
 * advisory lock alone decides.
 */
import { logIsQuiet, noteLogLine, sleep, thisMachine } from '../../shared/index.js';
import { JournalLockedError, type LockHolder } from '../errors.js';
import type { JournalLock } from '../journal-handle.js';
import { LONGEST_LOCK_WAIT_MS } from '../lock.js';
import type { OpenJournalOptions } from '../open.js';
import type { SyncPostgres } from './sync-client.js';

/** What the job lock is taken under: the journal (schema) and the job ('' for a writer without one). */
const lockKey = (schema: string | undefined, job: string | undefined) =>
  `ibatch-job/${schema ?? ''}/${job ?? ''}`;

function tryLock(client: SyncPostgres, key: string): boolean {
  const row = client.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS taken', [key])
    .rows[0];
  return row?.taken === true;
}

function holderOf(client: SyncPostgres, job: string): LockHolder | undefined {
  const row = client.query('SELECT hostname, pid, since FROM ibatch_job_locks WHERE job = $1', [
    job,
  ]).rows[0] as { hostname: string; pid: number; since: number } | undefined;
  return row ? { hostname: row.hostname, pid: row.pid, startedAt: row.since } : undefined;
}

export async function acquireJobLock(
  client: SyncPostgres,
  schema: string | undefined,
  display: string,
  options: OpenJournalOptions,
): Promise<JournalLock> {
  const key = lockKey(schema, options.job);
  const job = options.job ?? '';
  const wait = options.wait ?? false;
  const deadline = Date.now() + (wait === true ? LONGEST_LOCK_WAIT_MS : wait === false ? 0 : wait);
  const interval = 200;
  for (let waited = false; ; waited = true) {
    options.signal?.throwIfAborted();
    if (tryLock(client, key)) break;
    if (Date.now() + interval > deadline) {
      throw new JournalLockedError(
        `${display} (advisory lock)`,
        holderOf(client, job),
        options.job,
      );
    }
    if (options.onLockWait && (!waited || logIsQuiet())) {
      options.onLockWait(holderOf(client, job));
      noteLogLine();
    }
    await sleep(interval, options.signal);
  }
  client.query(
    `INSERT INTO ibatch_job_locks (job, hostname, pid, since) VALUES ($1, $2, $3, $4)
     ON CONFLICT (job) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid,
       since = excluded.since`,
    [job, thisMachine(), process.pid, Date.now()],
  );
  return {
    release() {
      // Closing the connection releases it too; this frees the job before.
      try {
        client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      } catch {
        // The connection is gone, and the lock with it.
      }
    },
  };
}
