/**
 * A PostgreSQL server for the benchmarks that measure the PostgreSQL journal
 * beside SQLite: started on loopback in a temp folder by the tests' launcher
 * (test/helpers/postgres-launch.ts, `fsync=off`), stopped and removed after.
 * Without the binaries there is no server: the benchmark says why on stderr
 * and reports its SQLite rows alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  launchPostgres,
  postgresMissing,
  type RunningPostgres,
} from '../test/helpers/postgres-launch.js';

/** A running server and its version string (for the notes), while `use` runs. */
export interface BenchPostgres {
  readonly server: RunningPostgres;
  /** e.g. `PostgreSQL 15.8`. */
  readonly version: string;
}

/** Runs `use` against a fresh server; undefined (and a line on stderr) when PostgreSQL is not installed. */
export async function withBenchPostgres<T>(
  bench: string,
  use: (postgres: BenchPostgres) => Promise<T>,
): Promise<T | undefined> {
  if (postgresMissing) {
    process.stderr.write(`${bench}: no PostgreSQL rows: ${postgresMissing}\n`);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-pg-'));
  try {
    const server = await launchPostgres(dir);
    try {
      const [row] = await server.query<{ server_version: string }>('SHOW server_version');
      const version = `PostgreSQL ${row?.server_version.split(' ')[0] ?? '?'}`;
      return await use({ server, version });
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
