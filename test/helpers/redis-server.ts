/**
 * A real `redis-server` (Debian package `redis-server`) on a free loopback
 * port, without persistence, for the shared-limits tests. If the binary is
 * missing the test FAILS with the install command: shared limits must be
 * tested, not skipped.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { freePort } from './ports.js';

export interface RunningRedis {
  readonly url: string;
  readonly port: number;
  /** Graceful stop (SIGTERM), waits for exit. */
  stop(): Promise<void>;
  /** SIGKILL, waits for exit: an outage as the runners see it. */
  kill(): Promise<void>;
}

const BINARY = process.env.REDIS_SERVER_BIN ?? 'redis-server';

function assertInstalled(): void {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `redis-server is required by the shared-limits tests but "${BINARY} --version" failed (${probe.error?.message ?? probe.stderr}). Install it: apt-get install -y --no-install-recommends redis-server`,
    );
  }
}

/** Sends PING until it gets +PONG (or -NOAUTH: a server with a password) or the deadline passes. */
async function waitForPong(port: number, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(500, () => socket.destroy());
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(/^(\+PONG|-NOAUTH)/.test(data.toString()));
      });
      socket.once('error', () => resolve(false));
      socket.once('close', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${deadlineMs} ms`);
}

async function exited(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = once(child, 'exit');
  child.kill(signal);
  await done;
}

/**
 * Starts redis-server; pass `port` to restart one on the same port after
 * `kill()`, `password` for a server that wants one (`url` then carries it).
 */
export async function startRedis(
  options: { port?: number; password?: string } = {},
): Promise<RunningRedis> {
  assertInstalled();
  const port = options.port ?? (await freePort());
  const child = spawn(
    BINARY,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      ...(options.password === undefined ? [] : ['--requirepass', options.password]),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    let exitedEarly = false;
    child.once('exit', () => {
      exitedEarly = true;
    });
    await waitForPong(port, 5000);
    if (exitedEarly) throw new Error(`redis-server exited before answering: ${stderr}`);
  } catch (error) {
    await exited(child, 'SIGKILL');
    throw new Error(
      `${(error as Error).message}; redis-server said: ${stderr.trim() || '(nothing)'}`,
    );
  }
  return {
    url: `redis://${options.password === undefined ? '' : `:${options.password}@`}127.0.0.1:${port}`,
    port,
    stop: () => exited(child, 'SIGTERM'),
    kill: () => exited(child, 'SIGKILL'),
  };
}
