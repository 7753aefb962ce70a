/**
 * The worker thread behind `SyncPostgres` (sync-client.ts): one node-postgres
 * connection, one statement at a time. Each request comes on the port; the
 * answer is posted back on it and then the shared flag is set and notified,
 * so the main thread, blocked in `Atomics.wait`, wakes to a message already
 * there. Errors travel as plain data (message, SQLSTATE code): the main
 * thread rebuilds and classifies them.
 */
import { type MessagePort, workerData } from 'node:worker_threads';
// Before node-postgres, which looks for it as it loads.
import './node-navigator.js';
import pg from 'pg';
import pgpass, { type PgpassConnection } from 'pgpass';

export interface WorkerInput {
  readonly connection: pg.ClientConfig;
  readonly flag: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** One statement: `name`, when given, prepares it once on this connection, then only binds it. */
export interface StatementText {
  readonly sql: string;
  readonly params?: readonly unknown[];
  readonly name?: string | undefined;
}

export type Request =
  | {
      readonly kind: 'query';
      readonly sql: string;
      readonly params: readonly unknown[];
      readonly name: string | undefined;
      /** Statements to run first, in order, their results unread (a deferred BEGIN, a write). */
      readonly before: readonly StatementText[];
      /** Not answered now: its answer is kept under this key for a `take` (a page read ahead). */
      readonly keep?: string | undefined;
    }
  /** Answers with the answer kept under `key` (once it is there). */
  | { readonly kind: 'take'; readonly key: string }
  /** Forgets the answer kept under `key`; not answered. */
  | { readonly kind: 'drop'; readonly key: string }
  | { readonly kind: 'close' };

export type Reply =
  | {
      readonly ok: true;
      readonly rowCount: number;
      /** Column names, in the order of each row's values in `tables`. */
      readonly fields: readonly string[];
      /** The rows as JSON arrays of value arrays, in order, a few thousand rows each (see `tablesOf`). */
      readonly tables: string[];
    }
  | {
      readonly ok: false;
      readonly message: string;
      readonly code: string | undefined;
      readonly connectionLost: boolean;
      /** The statement of `before` that failed; absent: the request's own. */
      readonly failedBefore?: number;
    };

// Big integers (ms timestamps, counts, sums of integers) as JS numbers, as
// SQLite gives them: every such value of the journal fits in 2^53.
for (const oid of [20, 1700]) pg.types.setTypeParser(oid, (text: string) => Number(text));

const { connection, flag, port } = workerData as WorkerInput;
const signal = new Int32Array(flag);
const client = new pg.Client(connection);
// Neither the URL nor PGPASSWORD gave a password: ~/.pgpass (or PGPASSFILE)
// is looked up at login by a function in `password` (node-postgres calls
// one; its types say string only). node-postgres read the file on its own
// before it deprecated that, with a warning on the user's terminal.
const login = client as unknown as { password: string | null | LookUpPassword };
type LookUpPassword = (parameters: PgpassConnection) => Promise<string | undefined>;
if (login.password === null) {
  login.password = (parameters) => new Promise((found) => pgpass(parameters, found));
}
let broken: Error | undefined;
// A connection that drops between statements is said at the next one.
client.on('error', (error) => {
  broken = error;
});

/**
 * Column types (PostgreSQL type OIDs) whose values JSON carries as they
 * are: text, name, char and varchar as strings, the integers and numeric
 * as numbers (read as numbers above: every such value of the journal
 * fits in 2^53), booleans, and `unknown` (a literal's type).
 */
const STRING_OR_INTEGER = new Set([25, 19, 18, 1043, 1042, 705, 20, 21, 23, 1700, 16]);
/** float4 and float8: a number, unless NaN or infinite, which JSON cannot carry. */
const FLOAT = new Set([700, 701]);

/**
 * The rows as JSON texts: a few strings cross to the main thread as a single
 * copy, where a structured clone of 100,000 row objects (a large read of a
 * run) costs seconds and holds both copies at once. The journal's columns
 * are text, integers and floats; another column's values (a function's
 * `void`, a cast) are looked at one by one: a value JSON would change (a
 * date, bytes, a NaN float it would turn into null) is refused here, not
 * changed on the way.
 */
function tablesOf(rows: readonly unknown[][], fields: readonly pg.FieldDef[]): string[] {
  fields.forEach((field, column) => {
    if (STRING_OR_INTEGER.has(field.dataTypeID)) return;
    const float = FLOAT.has(field.dataTypeID);
    for (const row of rows) {
      const value = row[column];
      const type = typeof value;
      if (value === null || (!float && (type === 'string' || type === 'boolean'))) continue;
      if (type === 'number' && Number.isFinite(value)) continue;
      throw new Error(
        `column ${field.name} gave a ${type} value JSON cannot carry: ${String(value)}`,
      );
    }
  });
  // In parts: the main thread turns each into objects and lets it go before
  // the next, so a 100,000-row read never holds its whole text, its parsed
  // arrays and its objects at once.
  const tables: string[] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_PART)
    tables.push(JSON.stringify(rows.slice(start, start + ROWS_PER_PART)));
  return tables;
}

/** Rows per JSON text of a reply. */
const ROWS_PER_PART = 2000;

function answer(reply: Reply): void {
  port.postMessage(reply);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

function failure(error: unknown): Extract<Reply, { ok: false }> {
  const e = error as { message?: unknown; code?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  return {
    ok: false,
    message: String(e.message ?? error),
    code,
    // Socket errors (ECONNREFUSED...), "Connection terminated", admin shutdown (57P01).
    connectionLost:
      broken !== undefined ||
      code === undefined ||
      code.startsWith('08') ||
      code.startsWith('57P') ||
      /^E[A-Z]+$/.test(code),
  };
}

const connected = client.connect().then(
  () => undefined,
  (error: unknown) => error,
);

/** Answers of statements sent ahead (`keep`), by key, until taken or dropped. */
const kept = new Map<string, Promise<Reply>>();

/** Where the last request handed to `inTurn` ends; the next starts after it. */
let tail: Promise<unknown> = Promise.resolve();

/**
 * Runs `work` once every request that arrived before it is done: the
 * connection gets one statement at a time, in arrival order. node-postgres
 * queued them itself but deprecates that (a warning on the user's terminal).
 */
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const done = tail.then(work);
  tail = done.catch(() => undefined);
  return done;
}

// Synchronous on arrival: a kept answer is in `kept` before the next message
// (its `take`) is looked at. Requests run in arrival order (`inTurn`), so one
// sent ahead runs before what follows it: a statement sent ahead has nothing
// to run before it, and the calling thread waits for each other answer, so no
// two requests' statements interleave.
port.on('message', (request: Request) => {
  switch (request.kind) {
    case 'close':
      // At once, not in turn: a read sent ahead and dropped is not waited for.
      void closeConnection();
      return;
    case 'take': {
      const reply = kept.get(request.key);
      kept.delete(request.key);
      void (reply ?? Promise.resolve(notKept(request.key))).then(answer);
      return;
    }
    case 'drop':
      kept.delete(request.key);
      return;
    case 'query': {
      const reply = inTurn(() => run(request));
      if (request.keep === undefined) void reply.then(answer);
      else kept.set(request.keep, reply);
    }
  }
});

async function closeConnection(): Promise<void> {
  await connected;
  await client.end().catch(() => undefined);
  answer({ ok: true, rowCount: 0, fields: [], tables: [] });
  port.close();
}

function notKept(key: string): Reply {
  return {
    ok: false,
    message: `no statement was sent ahead under ${key}`,
    code: undefined,
    connectionLost: false,
  };
}

/** The answer to one statement (and those to run before it); never rejects. */
async function run(request: Extract<Request, { kind: 'query' }>): Promise<Reply> {
  const connectError = await connected;
  // Not connected at all (refused, unreachable, login refused): the store is out of reach.
  if (connectError !== undefined) return { ...failure(connectError), connectionLost: true };
  if (broken) return failure(broken);
  let at = 0;
  try {
    for (; at < request.before.length; at++) {
      const { sql, params = [], name } = request.before[at] as StatementText;
      await client.query({ text: sql, values: [...params], ...(name ? { name } : {}) });
    }
    const answered: pg.QueryArrayResult | pg.QueryArrayResult[] = await client.query<unknown[]>({
      text: request.sql,
      values: [...request.params],
      rowMode: 'array',
      ...(request.name === undefined ? {} : { name: request.name }),
    });
    // A script of several statements (a migration's) answers each: the last is its result.
    const result = Array.isArray(answered) ? answered.at(-1) : answered;
    if (!result) return { ok: true, rowCount: 0, fields: [], tables: [] };
    let tables: string[];
    try {
      tables = tablesOf(result.rows, result.fields);
    } catch (error) {
      // The statement ran; its result is what this side cannot carry.
      return { ...failure(error), connectionLost: false };
    }
    return {
      ok: true,
      rowCount: result.rowCount ?? 0,
      fields: result.fields.map((field: pg.FieldDef) => field.name),
      tables,
    };
  } catch (error) {
    return at < request.before.length ? { ...failure(error), failedBefore: at } : failure(error);
  }
}
