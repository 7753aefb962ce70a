/**
 * A real PostgreSQL server for a test file (postgres-launch.ts starts it):
 * its files in a temp folder, stopped when the file's tests are done. Each
 * test asks it for its own schema or database.
 */
import { defer } from './cleanup.js';
import { launchPostgres, type RunningPostgres } from './postgres-launch.js';
import { tempDir } from './temp.js';

export { postgresMissing, type RunningPostgres } from './postgres-launch.js';

/** Starts a server for this test file (call in `beforeAll`); it stops when the file is done. */
export async function startPostgres(): Promise<RunningPostgres> {
  const server = await launchPostgres(tempDir('pg'));
  defer(() => server.stop());
  return server;
}
