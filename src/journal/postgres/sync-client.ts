/**
 * A synchronous PostgreSQL connection: node-postgres in a worker thread, the
 * calling thread blocked in `Atomics.wait` until the worker has the answer
 * (the pattern of `synckit`). It keeps `Journal` synchronous on both stores,
 * so the engine's write-ahead rule reads the same: when a journal method
 * returns, its COMMIT has returned. docs/journal.md weighs this against an
 * async journal interface.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type pg from 'pg';
import type { Reply, Request, StatementText, WorkerInput } from './worker.js';

/** A statement PostgreSQL refused (a constraint, a syntax error): its SQLSTATE in `code`. */
export class PostgresStatementError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'PostgresStatementError';
    this.code = code;
  }
}

/** The connection failed or was lost: the server is down, unreachable, or refused the login. */
export class PostgresConnectionError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'PostgresConnectionError';
    this.code = code;
  }
}

export interface QueryOptions {
  readonly booleansAsNumbers?: boolean;
  readonly name?: string;
  readonly before?: readonly StatementText[];
}

export interface QueryResult {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number;
}

/**
 * The worker's file: compiled beside this one in dist/. From the sources
 * (tests) it is the .ts file, required through tsx's CommonJS hook inside
 * the worker (`--import tsx` in a worker's execArgv registers its loader too
 * late for the worker's own entry on Node 20).
 */
function workerEntry(): URL | string {
  const js = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return js;
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
  const ts = fileURLToPath(new URL('./worker.ts', import.meta.url));
  return `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(ts)});`;
}

/**
 * How long one statement may keep the caller blocked before the connection
 * counts as lost. An assumption: far above any journal statement, and below
 * what a person would take for a hang.
 */
const STATEMENT_DEADLINE_MS = 60_000;

/**
 * How long the caller sleeps between two looks at the clock while it waits:
 * a wake much later than this means the process itself was stopped (SIGSTOP,
 * Ctrl-Z, a suspended machine), and that time is not the server's.
 */
const WAKE_MS = 1000;

/** How late a wake may come on a busy machine and still count whole (an assumption). */
const LATE_WAKE_MS = 250;

/** The worker's young generation, in MB (otherwise V8 sizes it as for the main thread). */
const WORKER_YOUNG_GENERATION_MB = 8;

/**
 * The worker's rows (worker.ts `tablesOf`) as objects by column name, as
 * node-postgres gives them; with `booleansAsNumbers`, a boolean as 1 or 0.
 * Each part's text is let go once it is parsed.
 */
function rowsOf(
  fields: readonly string[],
  tables: string[],
  booleansAsNumbers: boolean,
): Record<string, unknown>[] {
  const toRow = rowMaker(fields, booleansAsNumbers);
  const rows: Record<string, unknown>[] = [];
  for (let part = 0; part < tables.length; part++) {
    const values = JSON.parse(tables[part] as string) as unknown[][];
    tables[part] = '';
    for (const line of values) rows.push(toRow(line));
  }
  return rows;
}

type RowMaker = (values: readonly unknown[]) => Record<string, unknown>;

/** Row makers by column list; a journal sends a few dozen statement texts. */
const rowMakers = new Map<string, RowMaker>();
const MAX_ROW_MAKERS = 512;

/**
 * A function making one row object from its values: an object literal with
 * the columns as its fields, compiled once per column list, so every row of
 * a read has one shape from the start, where setting the fields one by one
 * by name went through a shape per field for each row. The names are
 * written as JSON string literals: any column name is quoted as data.
 */
function rowMaker(fields: readonly string[], booleansAsNumbers: boolean): RowMaker {
  const id = `${booleansAsNumbers ? 1 : 0}${JSON.stringify(fields)}`;
  let make = rowMakers.get(id);
  if (make) return make;
  const value = (c: number) =>
    booleansAsNumbers ? `(typeof v[${c}] === 'boolean' ? Number(v[${c}]) : v[${c}])` : `v[${c}]`;
  const body = fields.map((name, c) => `${JSON.stringify(name)}: ${value(c)}`).join(', ');
  // Two columns of one name: the last wins, as setting them in turn did.
  make = new Function('v', `return { ${body} };`) as RowMaker;
  if (rowMakers.size < MAX_ROW_MAKERS) rowMakers.set(id, make);
  return make;
}

export class SyncPostgres {
  readonly #worker: Worker;
  readonly #port: MessageChannel['port1'];
  readonly #flag = new Int32Array(new SharedArrayBuffer(4));
  readonly #deadlineMs: number;
  #closed = false;

  /** `deadlineMs`: how long one statement may keep the caller blocked (tests shorten it). */
  constructor(connection: pg.ClientConfig, options: { readonly deadlineMs?: number } = {}) {
    this.#deadlineMs = options.deadlineMs ?? STATEMENT_DEADLINE_MS;
    const { port1, port2 } = new MessageChannel();
    const entry = workerEntry();
    const input: WorkerInput = {
      connection,
      flag: this.#flag.buffer as SharedArrayBuffer,
      port: port2,
    };
    this.#worker = new Worker(entry, {
      eval: typeof entry === 'string',
      workerData: input,
      transferList: [port2],
      // The worker's garbage (each reply's rows and text) is young and soon
      // collected: a small young generation keeps its share of the process's
      // memory small (docs/benchmarks.md, "Figures behind choices in the code").
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      // The journal's connection is no reason for the process to stay alive.
      stdout: false,
      stderr: false,
    });
    this.#worker.unref();
    this.#port = port1;
  }

  /**
   * Runs one statement and returns its rows; throws a PostgresStatementError
   * or PostgresConnectionError. Options: `booleansAsNumbers`, each boolean
   * value as 1 or 0, as SQLite gives a condition selected as a value;
   * `name`, the statement is prepared on the connection under this name the
   * first time and only bound after (one name per text: the caller's
   * promise); `before`, statements run first in the same round trip, their
   * results unread (the first failure is the answer).
   */
  query(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}): QueryResult {
    const reply = this.#ask({
      kind: 'query',
      sql,
      params,
      name: options.name,
      before: options.before ?? [],
    });
    return this.#resultOf(reply, sql, options);
  }

  /**
   * Sends one statement without waiting (nothing runs before it): the
   * server and the worker work on it while this thread goes on, and
   * `take(key)` returns its answer (a read's next page, read ahead).
   */
  ahead(key: string, sql: string, params: readonly unknown[] = []): void {
    if (this.#closed) return;
    const request: Request = { kind: 'query', sql, params, name: undefined, before: [], keep: key };
    this.#port.postMessage(request);
  }

  /** The answer of the statement sent `ahead` under `key`, as `query` returns it. */
  take(
    key: string,
    sql: string,
    options: Pick<QueryOptions, 'booleansAsNumbers'> = {},
  ): QueryResult {
    return this.#resultOf(this.#ask({ kind: 'take', key }), sql, options);
  }

  /** Forgets the answer of the statement sent `ahead` under `key` (a read left early). */
  drop(key: string): void {
    const request: Request = { kind: 'drop', key };
    if (!this.#closed) this.#port.postMessage(request);
  }

  #resultOf(reply: Reply, sql: string, options: QueryOptions): QueryResult {
    if (reply.ok) {
      const rows = rowsOf(reply.fields, reply.tables, options.booleansAsNumbers === true);
      return { rows, rowCount: reply.rowCount };
    }
    const failed =
      reply.failedBefore === undefined ? sql : (options.before?.[reply.failedBefore]?.sql ?? sql);
    throw reply.connectionLost
      ? new PostgresConnectionError(reply.message, reply.code)
      : new PostgresStatementError(
          `${reply.message} (in: ${failed.replace(/\s+/g, ' ')})`,
          reply.code,
        );
  }

  #ask(request: Request): Reply {
    if (this.#closed)
      throw new PostgresConnectionError('The journal connection is closed', undefined);
    Atomics.store(this.#flag, 0, 0);
    this.#port.postMessage(request);
    // The time waited counts only while this process runs: one stopped for
    // minutes (the bench's copy of a running journal, Ctrl-Z) wakes to an
    // answer a few milliseconds away, not to a lost server.
    let waited = 0;
    let last = Date.now();
    for (;;) {
      const asked = Math.max(1, Math.min(WAKE_MS, this.#deadlineMs - waited));
      Atomics.wait(this.#flag, 0, 0, asked);
      const message = receiveMessageOnPort(this.#port);
      if (message) return message.message as Reply;
      const now = Date.now();
      // A wake far later than asked for: the process was stopped meanwhile.
      waited += Math.min(now - last, asked + LATE_WAKE_MS);
      last = now;
      if (waited >= this.#deadlineMs) {
        this.#closed = true;
        void this.#worker.terminate();
        throw new PostgresConnectionError(
          `PostgreSQL did not answer within ${this.#deadlineMs / 1000} s`,
          undefined,
        );
      }
      // Woken with no message yet: the worker sets the flag right after posting.
      Atomics.store(this.#flag, 0, 0);
    }
  }

  /** Ends the connection and the worker. Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#ask({ kind: 'close' });
    this.#closed = true;
    this.#port.close();
    void this.#worker.terminate();
  }
}
