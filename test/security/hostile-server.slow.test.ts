/**
 * A hostile service: huge bodies, endless bodies, redirects to another origin.
 * The client must fail cleanly with a typed error, in bounded time and memory,
 * and never follow a redirect (the other origin sees no request at all).
 *
 * The emulator runs as a separate process (`ibatch emulator --json`) so the
 * memory it spends making huge bodies does not count against the client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ContractError, createClient, TimeoutError } from '../../src/api/index.js';
import { EmulatorAdmin } from '../../src/emulator/index.js';
import { IbatchError } from '../../src/shared/index.js';
import { firstStdoutLine, REPO, runCliCaptured, spawnCli, tempDir } from '../helpers/index.js';

interface ChildEmulator {
  baseUrl: string;
  adminUrl: string;
  accounts: Array<{ id: string; apiKey: string }>;
}

let em: ChildEmulator;
let admin: EmulatorAdmin;

beforeAll(async () => {
  // Stopped (SIGKILL) by the kit once the file is done.
  const child = spawnCli(['emulator', '--json', '--port', '0', '--time-scale', '100'], {
    cwd: REPO,
  });
  const line = await firstStdoutLine(child);
  em = JSON.parse(line) as ChildEmulator;
  admin = new EmulatorAdmin(em.adminUrl);
});

function key(): string {
  const account = em.accounts[0];
  if (!account) throw new Error('no account');
  return account.apiKey;
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

describe('huge and endless bodies', () => {
  it('a 256 MiB body is refused after the 10 MiB cap: ContractError, bounded memory', async () => {
    await admin.setFaults({ hugeBodyBytes: 256 * 1024 * 1024 });
    await admin.scriptFaults([{ endpoint: 'getAccount', fault: 'huge-body', times: 3 }]);
    const client = createClient({ baseUrl: em.baseUrl, apiKey: key() });
    try {
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      try {
        for (let i = 0; i < 3; i++) {
          const error = await client.getAccount().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(ContractError);
          expect(error).toBeInstanceOf(IbatchError);
          expect((error as Error).message).toMatch(/too large|bytes|exceed/i);
        }
      } finally {
        clearInterval(sampler);
      }
      // Reading even one body whole would add 256 MiB.
      expect(mb(peak - before), `rss grew by ${mb(peak - before)} MiB`).toBeLessThan(96);
    } finally {
      await client.close();
      await admin.setFaults({});
    }
  });

  it('an endless body ends in a typed error, bounded memory', async () => {
    await admin.scriptFaults([{ endpoint: 'getAccount', fault: 'endless-body' }]);
    const client = createClient({ baseUrl: em.baseUrl, apiKey: key(), bodyTimeoutMs: 2000 });
    try {
      const before = process.memoryUsage().rss;
      // Ends at all (an endless read fails at the test's timeout), in a typed error:
      const error = await client.getAccount().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IbatchError);
      expect(error instanceof ContractError || error instanceof TimeoutError).toBe(true);
      expect(mb(process.memoryUsage().rss - before)).toBeLessThan(96);
    } finally {
      await client.close();
    }
  });
});

describe('redirects are never followed', () => {
  let hostile: Server;
  let other: Server;
  let otherRequests = 0;
  let otherAuthorization = 0;
  let hostileUrl = '';

  beforeAll(async () => {
    other = createServer((req, res) => {
      otherRequests++;
      if (req.headers.authorization) otherAuthorization++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as AddressInfo).port;
    // "localhost" vs "127.0.0.1": a different origin, as a different host would be.
    hostile = createServer((req, res) => {
      res.writeHead(307, { Location: `http://localhost:${otherPort}${req.url ?? '/'}` });
      res.end();
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/api/v1`;
  });

  afterAll(async () => {
    await Promise.all(
      [hostile, other].map((s) => new Promise((resolve) => s.close(() => resolve(undefined)))),
    );
  });

  it('a 307 to another origin is a typed ApiError (exit 2); the other origin sees 0 requests', async () => {
    const client = createClient({ baseUrl: hostileUrl, apiKey: key() });
    try {
      for (const call of [
        () => client.getAccount(),
        () =>
          client.createGeneration(
            'flux-portrait',
            { input: { prompt: 'x' } },
            { idempotencyKey: 'redirect-test-1' },
          ),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(307);
        expect((error as ApiError).exitCode).toBe(2);
        expect((error as Error).message).toMatch(/redirect/);
        expect((error as Error).message).not.toContain(key());
      }
    } finally {
      await client.close();
    }
    expect(otherRequests).toBe(0);
    expect(otherAuthorization).toBe(0);
  });

  it('`ibatch account` against the redirecting service exits 2 with a clear message', async () => {
    const dir = tempDir('security');
    const result = await runCliCaptured(
      ['account', '--base-url', hostileUrl],
      { IBATCH_API_KEY: key() },
      dir,
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/redirect/);
    expect(result.stderr).toMatch(/base URL/);
    expect(result.stderr).not.toContain(key());
    expect(otherRequests).toBe(0);
  });

  it("the emulator's redirect fault: the upload origin records no leaked Authorization", async () => {
    await admin.scriptFaults([{ endpoint: 'getAccount', fault: 'redirect' }]);
    const client = createClient({ baseUrl: em.baseUrl, apiKey: key() });
    try {
      const error = await client.getAccount().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(307);
    } finally {
      await client.close();
    }
    const stats = await admin.stats();
    expect(stats.faults.some((f) => f.fault === 'redirect')).toBe(true);
    expect(stats.uploadAuthorization).toEqual([]);
  });
});
