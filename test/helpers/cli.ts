/** Runs `ibatch ARGS` in this process (no build needed), capturing its output. */
import { Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/command.js';
import { runCli } from '../../src/cli/main.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A writable that keeps what it was given; `isTTY` may be set to test TTY output. */
export function capture(): Writable & { text(): string; isTTY?: boolean } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return Object.assign(stream, { text: () => chunks.join('') });
}

export async function runCliCaptured(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CliResult> {
  const stdout = capture();
  const stderr = capture();
  const io: CliIo = { stdout, stderr, env, cwd, exitCode: 0 };
  const code = await runCli(args, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
