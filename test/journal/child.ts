/** Spawns a fixture script under tsx and waits for a line on its stdout. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

export interface Child {
  readonly process: ChildProcess;
  /** Every complete stdout line so far. */
  readonly lines: string[];
  /** Resolves once a line satisfies `match` (bounded by `timeoutMs`). */
  waitFor(match: (line: string) => boolean, timeoutMs?: number): Promise<void>;
  /** SIGKILLs the child and resolves when it has exited. */
  kill9(): Promise<void>;
}

export function spawnFixture(name: string, ...args: string[]): Child {
  const script = fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  let partial = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    lines,
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`timed out waiting for ${name} (lines: ${lines.slice(-3).join(' | ')})`),
          );
        }, timeoutMs);
        const check = () => {
          if (!lines.some(match)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        void exited.then(() => {
          if (waiters.has(check)) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`${name} exited with ${child.exitCode}`));
          }
        });
        check();
      });
    },
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
