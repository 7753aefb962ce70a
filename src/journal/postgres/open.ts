/**
 * Opening a PostgreSQL journal (`--journal postgres://...`): connect, take
 * the job's lock (writers), migrate, and hand the store to a `Journal`.
 * Readers (`status`, `costs`, `report`) take no lock and never migrate; in
 * PostgreSQL they never block a writer either.
 */
import { registerSecret } from '../../shared/index.js';
import { journalFault } from '../faults.js';
import { Journal } from '../journal.js';
import type { OpenJournalOptions } from '../open.js';
import { acquireJobLock } from './job-lock.js';
import { assertPostgresSchema, migratePostgres } from './migrate.js';
import { postgresStore } from './store.js';
import { SyncPostgres } from './sync-client.js';
import { parseJournalUrl } from './url.js';

/**
 * How long connecting may take before the server counts as unreachable. An
 * assumption: a reachable server answers a login far sooner.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The server's TCP keepalive for this session: how soon it notices a runner
 * whose machine vanished without closing the connection (power loss, network
 * gone), and so frees its job lock. Idle 30 s, then 3 probes 10 s apart: a
 * silent peer is dropped about a minute after its last packet, where the
 * operating system's defaults take hours. A live runner's kernel answers the
 * probes, so a long wait on the service never loses the lock.
 */
const SERVER_KEEPALIVE = [
  '-c tcp_keepalives_idle=30',
  '-c tcp_keepalives_interval=10',
  '-c tcp_keepalives_count=3',
];

/**
 * No parallel plans in this session. The journal's statements read a few
 * rows, a page, or one run's rows; a parallel plan starts server processes
 * for each, and the planner picks one for a wide table's scan even when the
 * plan reads no row of it (a run's failures, where the run's counts show
 * none: docs/benchmarks.md, "ninth round").
 */
const NO_PARALLEL_PLANS = '-c max_parallel_workers_per_gather=0';

export async function openPostgresJournal(
  value: string,
  options: OpenJournalOptions,
): Promise<Journal> {
  const { url, client } = connect(value);
  try {
    if (options.readonly) {
      assertPostgresSchema(client, url.display);
      return new Journal(postgresStore(client, options.now), url.display, undefined);
    }
    // Migrating first is safe: migrations take their own lock.
    migratePostgres(client, url.schema, url.display);
    const lock = await acquireJobLock(client, url.schema, url.display, options);
    return new Journal(postgresStore(client, options.now), url.display, lock);
  } catch (error) {
    client.close();
    const fault = journalFault(error, url.display, 'open');
    if (fault) throw fault;
    throw error;
  }
}

function connect(value: string): { url: ReturnType<typeof parseJournalUrl>; client: SyncPostgres } {
  const url = parseJournalUrl(value);
  registerSecret(url.password);
  registerSecret(process.env.PGPASSWORD);
  const client = new SyncPostgres({
    connectionString: url.connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'ibatch',
    options: [
      ...(url.schema !== undefined ? [`-c search_path="${url.schema}"`] : []),
      ...SERVER_KEEPALIVE,
      NO_PARALLEL_PLANS,
    ].join(' '),
  });
  return { url, client };
}
