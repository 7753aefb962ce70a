/**
 * A real PostgreSQL server for a test file (postgres-launch.ts starts it):
 * its files in a temp folder, stopped when the file's tests are done. Each
 * test asks it for its own schema or database.
 */
import { beforeAll, describe } from 'vitest';
import { defer } from './cleanup.js';
import { launchPostgres, postgresMissing, type RunningPostgres } from './postgres-launch.js';
import { tempDir } from './temp.js';

export { postgresMissing, type RunningPostgres } from './postgres-launch.js';

/** Starts a server for this test file (call in `beforeAll`); it stops when the file is done. */
export async function startPostgres(): Promise<RunningPostgres> {
  const server = await launchPostgres(tempDir('pg'));
  defer(() => server.stop());
  return server;
}

/**
 * The test file's server, started in the file's `beforeAll` when the binaries
 * are there (the file's blocks skip by `postgresMissing` otherwise, see
 * {@link describePostgres}) and stopped when the file is done. Read it in tests
 * and hooks, not while the file loads.
 */
export function postgresForFile(): RunningPostgres {
  let server: RunningPostgres | undefined;
  beforeAll(async () => {
    if (!postgresMissing) server = await startPostgres();
  });
  return new Proxy({} as RunningPostgres, {
    get: (_target, key) => {
      if (!server)
        throw new Error('the PostgreSQL server is not started (missing, or read too early)');
      return Reflect.get(server, key);
    },
  });
}

/** A describe block that needs PostgreSQL: skipped, saying why, where its binaries are missing. */
export function describePostgres(title: string, body: () => void): void {
  describe.skipIf(postgresMissing)(
    `${title}${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`,
    body,
  );
}
