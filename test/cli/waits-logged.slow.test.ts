/**
 * Every wait says what it waits for: real `ibatch run` processes against the
 * emulator, their JSON logs read line by line. A run waiting at the rate
 * gate and for slow generations never goes WAIT_REPORT_MS without a line;
 * an unreachable `--limits-store` Redis (nothing listening, or a server that
 * never answers) is logged once its connect timeout passes, and the run goes on on local limits instead of stalling.
 * Spawned processes need `npm run build`.
 */
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WAIT_REPORT_MS } from '../../src/shared/index.js';
import {
  defer,
  emulatorEnv,
  freePort,
  jsonLogs,
  spawnCli,
  testEmulator,
  until,
} from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  workspace,
} from '../scheduler/helpers.js';

/** A loopback port whose server takes every connection and never says a word (a hung or firewalled Redis); closed after the test. */
async function silentServer(): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('long waits are logged', () => {
  it('a run waiting at the gate and for slow generations logs at least every WAIT_REPORT_MS', async () => {
    // Real time (scale 1): one create per 20 s, each generation 15 s.
    const e = await testEmulator({
      rateLimits: { generations: { count: 1, windowMs: 20_000 } },
      latency: { 'sdxl-lite': [15_000, 15_000] },
    });
    const ws = workspace(imageJob({ name: 'slowwaits', n: 2 }));
    const env = {
      ...emulatorEnv(e),
      IBATCH_LIMITS: 'requests=120/60s,generations=1/20s,trainings=5/3600s,uploads=30/60s',
    };
    const run = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    await until(() => run.child.exitCode !== null, { timeoutMs: 120_000, what: 'the run to end' });
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(0);
    const lines = jsonLogs(result.stderr);
    const gaps = lines.slice(1).map((line, i) => line.time - (lines[i]?.time ?? line.time));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(WAIT_REPORT_MS);
    const said = lines.map((l) => l.msg).join('\n');
    // The second create's wait at the gate and the first generation's are said,
    // by the gate's report or the run's, whichever speaks first.
    expect(said).toMatch(
      /waiting for the rate limits: 1 request\(s\)|1 request\(s\) to pass the rate limits/,
    );
    expect(said).toMatch(
      /waiting for 1 generation\(s\) to finish \(image 1; the first gives up at \d\d:\d\d:\d\d\)/,
    );
    expectOneChargePerItem(await charges(e), 2);
  }, 150_000);

  it.each([
    ['nothing listens at its port', false],
    ['its port takes the connection and never answers', true],
  ] as const)(
    'an unreachable --limits-store Redis (%s): logged after the connect timeout, then the run goes on local limits',
    async (_what, silent) => {
      const e = await testEmulator({ timeScale: 30 });
      const ws = workspace(imageJob({ name: 'noredis', n: 3 }));
      const port = silent ? await silentServer() : await freePort();
      const run = spawnCli(['run', ws.jobPath, '--limits-store', `redis://127.0.0.1:${port}`], {
        env: envFor(e, 30),
        cwd: ws.dir,
      });
      // A hang guard: before, the first request came about a minute after start.
      await until(() => run.child.exitCode !== null, { timeoutMs: 60_000, what: 'the run to end' });
      const result = await run.exited;
      expect(result.code, result.stderr).toBe(0);
      const lines = jsonLogs(result.stderr);
      const down = lines.find((l) => l.msg.startsWith(`Redis at 127.0.0.1:${port} is unreachable`));
      expect(down, result.stderr).toBeDefined();
      expect(down?.msg).toContain('running on local limits (1/2 of each bucket) until it answers');
      expectOneChargePerItem(await charges(e), 3);
    },
    90_000,
  );
});
