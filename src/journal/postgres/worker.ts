/**
 * The worker thread behind `SyncPostgres` (sync-client.ts): one node-postgres
 * connection, one statement at a time. Each request comes on the port; the
 * answer is posted back on it and then the shared flag is set and notified,
 * so the main thread, blocked in `Atomics.wait`, wakes to a message already
 * there. Errors travel as plain data (message, SQLSTATE code): the main
 * thread rebuilds and classifies them.
 */
import { type MessagePort, workerData } from 'node:worker_threads';
import pg from 'pg';

export interface WorkerInput {
  readonly connection: pg.ClientConfig;
  readonly flag: SharedArrayBuffer;
  readonly port: MessagePort;
}

export type Request =
  | { readonly kind: 'query'; readonly sql: string; readonly params: readonly unknown[] }
  | { readonly kind: 'close' };

export type Reply =
  | { readonly ok: true; readonly rows: unknown[]; readonly rowCount: number }
  | {
      readonly ok: false;
      readonly message: string;
      readonly code: string | undefined;
      readonly connectionLost: boolean;
    };

// Big integers (ms timestamps, counts, sums of integers) as JS numbers, as
// SQLite gives them: every such value of the journal fits in 2^53.
for (const oid of [20, 1700]) pg.types.setTypeParser(oid, (text: string) => Number(text));

const { connection, flag, port } = workerData as WorkerInput;
const signal = new Int32Array(flag);
const client = new pg.Client(connection);
let broken: Error | undefined;
// A connection that drops between statements is said at the next one.
client.on('error', (error) => {
  broken = error;
});

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

port.on('message', async (request: Request) => {
  const connectError = await connected;
  if (request.kind === 'close') {
    await client.end().catch(() => undefined);
    answer({ ok: true, rows: [], rowCount: 0 });
    port.close();
    return;
  }
  // Not connected at all (refused, unreachable, login refused): the store is out of reach.
  if (connectError !== undefined) return answer({ ...failure(connectError), connectionLost: true });
  if (broken) return answer(failure(broken));
  try {
    const result = await client.query({ text: request.sql, values: [...request.params] });
    answer({ ok: true, rows: result.rows, rowCount: result.rowCount ?? 0 });
  } catch (error) {
    answer(failure(error));
  }
});
