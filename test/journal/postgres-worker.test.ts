/**
 * What the PostgreSQL journal's worker thread loads (src/journal/postgres/
 * worker.ts): node-postgres, and not Node's bundled fetch, which node-postgres
 * pulls in on Node 20 to look for a Cloudflare runtime (node-navigator.ts).
 * No server: the worker's connection is refused, after it has loaded.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type WorkerOptions } from 'node:worker_threads';
import { expect, it } from 'vitest';
import type { WorkerInput } from '../../src/journal/postgres/worker.js';
import { freePort } from '../helpers/index.js';

const require = createRequire(import.meta.url);

/** Node's own modules a new worker thread has loaded once it required `file`. */
async function modulesLoadedBy(
  file: string,
  options: Pick<WorkerOptions, 'workerData' | 'transferList'> = {},
): Promise<string[]> {
  const worker = new Worker(
    `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();
     require(${JSON.stringify(file)});
     require('node:worker_threads').parentPort.postMessage(process.moduleLoadList);`,
    { eval: true, ...options },
  );
  try {
    return await new Promise<string[]>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

const fetchModules = (loaded: readonly string[]) => loaded.filter((name) => /undici/.test(name));
const hasNavigator = typeof (globalThis as { navigator?: unknown }).navigator !== 'undefined';

it("the journal's worker loads node-postgres without Node's fetch (undici)", async () => {
  const { port2 } = new MessageChannel();
  const workerData: WorkerInput = {
    connection: { host: '127.0.0.1', port: await freePort(), connectionTimeoutMillis: 1000 },
    flag: new SharedArrayBuffer(4),
    port: port2,
  };
  const worker = fileURLToPath(new URL('../../src/journal/postgres/worker.ts', import.meta.url));
  const loaded = await modulesLoadedBy(worker, { workerData, transferList: [port2] });
  // node-postgres is loaded (its sockets)...
  expect(loaded).toContain('NativeModule net');
  // ...and fetch is not.
  expect(fetchModules(loaded)).toEqual([]);
});

// What the test above guards against: a Node without `navigator` (20) loads
// fetch with node-postgres. Node 21 and later have one.
it.skipIf(hasNavigator)('node-postgres alone, on Node 20, does load fetch', async () => {
  const loaded = await modulesLoadedBy(require.resolve('pg'));
  expect(fetchModules(loaded).length).toBeGreaterThan(0);
});
