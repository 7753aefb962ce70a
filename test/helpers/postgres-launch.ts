/**
 * A real PostgreSQL server (Debian package `postgresql`) for the tests and
 * benchmarks that need one (no vitest here: bench/ runs outside it; tests
 * use postgres.ts): `initdb` into a folder, `postgres` on a free loopback
 * port with its unix socket in that folder. TCP connections need the superuser's password (scram-sha-256), so
 * a test sees a password travel the way a team's would; each test asks for
 * its own schema or database, so tests never share tables or locks.
 *
 * The binaries are looked up under /usr/lib/postgresql/<version>/bin (newest
 * first) or in PG_BIN. Without them `postgresMissing` says why and the tests
 * skip with it: .ci/run installs the package, so CI never skips. PostgreSQL refuses to run as root: as root the server runs as
 * the `postgres` user the package creates.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { until } from './until.js';

const SUPERUSER = 'ibatch';

/** The folder holding `initdb` and `postgres`, or undefined. */
function findBinaries(): string | undefined {
  const candidates = process.env.PG_BIN
    ? [process.env.PG_BIN]
    : (() => {
        const root = '/usr/lib/postgresql';
        if (!existsSync(root)) return [];
        return readdirSync(root)
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => join(root, v, 'bin'));
      })();
  return candidates.find(
    (dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')),
  );
}

const BIN = findBinaries();

/**
 * Why the PostgreSQL tests cannot run here (a reason for `it.skipIf`), or
 * false when they can.
 */
export const postgresMissing: string | false = BIN
  ? false
  : 'PostgreSQL is not installed (no initdb and postgres under /usr/lib/postgresql/*/bin or PG_BIN): ' +
    'apt-get install -y --no-install-recommends postgresql';

export interface RunningPostgres {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly user: string;
  /** The superuser's password (scram-sha-256 over TCP). */
  readonly password: string;
  /** `postgres://USER:PASSWORD@127.0.0.1:PORT/DB`. */
  url(database?: string): string;
  /** A fresh empty schema in the `postgres` database: its URL (`?schema=NAME`). */
  newSchema(): Promise<string>;
  /** A fresh empty database: its URL. */
  newDatabase(): Promise<string>;
  /** Runs SQL as the superuser in `database` (default `postgres`). */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params?: unknown[],
    database?: string,
  ): Promise<T[]>;
  /** Fast shutdown (SIGINT): connections are cut, as when the server goes away. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data folder, after `stop()`. */
  restart(): Promise<void>;
}

/** Who runs the server: the `postgres` user when we are root (PostgreSQL refuses root). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no `postgres` user to run it as',
    );
  }
}

let counter = 0;

/** Starts a server with its files in `dir` (an empty folder the caller removes after `stop()`). */
export async function launchPostgres(dir: string): Promise<RunningPostgres> {
  if (!BIN) throw new Error(postgresMissing || 'unreachable');
  const bin = BIN;
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const owner = serverUser();
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`);
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(pwfile, owner.uid, owner.gid);
  }
  chmodSync(dir, 0o700);
  execFileSync(
    join(bin, 'initdb'),
    [
      '-D',
      data,
      '-U',
      SUPERUSER,
      `--pwfile=${pwfile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '--no-sync',
      '--no-instructions',
      '-E',
      'UTF8',
      '--locale=C',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], ...owner },
  );
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    log = '';
    const server = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${dir}`,
        // A test server: durability is the journal's business on the real one.
        '-c',
        'fsync=off',
        '-c',
        'max_connections=100',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], ...owner },
    );
    server.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    child = server;
    await until(
      async () => {
        if (server.exitCode !== null) throw new Error(`postgres exited: ${log}`);
        return ready();
      },
      { timeoutMs: 20_000, what: `postgres on port ${port} to accept connections` },
    );
  };
  const url = (database = 'postgres') =>
    `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${database}`;
  const query = async <T extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    database = 'postgres',
  ): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  const ready = async () => {
    try {
      await query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  };
  const stop = async () => {
    const server = child;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    server.kill('SIGINT');
    await exited;
  };
  await start();
  const unique = () => `t${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`;
  return {
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    password,
    url,
    query,
    async newSchema() {
      const name = unique();
      await query(`CREATE SCHEMA ${name}`);
      return `${url()}?schema=${name}`;
    },
    async newDatabase() {
      const name = unique();
      await query(`CREATE DATABASE ${name}`);
      return url(name);
    },
    stop,
    restart: start,
  };
}
