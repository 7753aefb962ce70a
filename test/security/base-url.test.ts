/**
 * A non-https base URL is refused with exit 2 before any connection, unless
 * its host is loopback. "Before any connection" is proved with a listener on
 * this machine's non-loopback address: it must see no connection at all.
 */
import { existsSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured, tempDir } from '../helpers/index.js';
import { emulator, LIMITS, writeJob } from './helpers.js';

const KEY = `ifk_live_${'0123456789abcdef'.repeat(2)}`;

function externalIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

describe('non-https base URLs', () => {
  it.each([
    ['--base-url', 'http://example.com/api/v1'],
    ['IBATCH_BASE_URL', 'http://api.example.com/api/v1'],
  ])('run with %s %s: exit 2, says https, spends nothing', async (how, url) => {
    const dir = tempDir('security');
    const jobPath = await writeJob(dir);
    const result = await runCliCaptured(
      ['run', jobPath, '--limits', LIMITS, ...(how === '--base-url' ? ['--base-url', url] : [])],
      { IBATCH_API_KEY: KEY, ...(how === 'IBATCH_BASE_URL' ? { IBATCH_BASE_URL: url } : {}) },
      dir,
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/https/);
    expect(result.stderr).not.toContain(KEY);
    // Refused up front: no journal was made (no connection either: the test below).
    expect(existsSync(path.join(dir, '.ibatch'))).toBe(false);
  });

  const address = externalIPv4();
  // Needs a non-loopback IPv4 address on this machine to listen on.
  it.skipIf(!address)(
    'plain http to a non-loopback address is refused before any connection is made',
    async () => {
      const sockets: Socket[] = [];
      const server = createServer((socket) => {
        sockets.push(socket);
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      const port = (server.address() as { port: number }).port;
      try {
        const dir = tempDir('security');
        for (const argv of [
          ['account', '--base-url', `http://${address}:${port}/api/v1`],
          ['run', await writeJob(dir), '--base-url', `http://${address}:${port}/api/v1`],
        ]) {
          const result = await runCliCaptured(argv, { IBATCH_API_KEY: KEY }, dir);
          expect(result.code, result.stderr).toBe(2);
          expect(result.stderr).toMatch(/https/);
        }
        // The commands have returned: any connect they made has been accepted by now.
        const open = await new Promise<number>((resolve) =>
          server.getConnections((_e, count) => resolve(count)),
        );
        expect(open).toBe(0);
        expect(sockets).toHaveLength(0);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  it('plain http to loopback is accepted (127.0.0.1 and localhost)', async () => {
    const em = await emulator();
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const dir = tempDir('security');
    for (const host of ['127.0.0.1', 'localhost']) {
      const url = em.baseUrl.replace('127.0.0.1', host);
      const result = await runCliCaptured(
        ['account', '--base-url', url, '--json'],
        { IBATCH_API_KEY: account.apiKey },
        dir,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ credits: expect.any(Number) });
    }
  });
});
