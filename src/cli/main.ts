/**
 * The `ibatch` entry point: builds the commander program from the command
 * modules, runs it, and maps typed errors to the interface's exit codes.
 */
import { setFlagsFromString } from 'node:v8';
import { Command, CommanderError } from 'commander';
import { asLocalFileError, ensureIbatchError, UnexpectedError } from '../shared/errors.js';
import { EXIT } from '../shared/exit-codes.js';
import { printableLines, registerSecret } from '../shared/redact.js';
import { VERSION } from '../version.js';
import type { CliIo, CommandModule } from './command.js';
import { commandsFor } from './commands/index.js';
import { pointAtHelp, withExamples } from './help.js';
import { guardedOutput } from './output-streams.js';

/** The program with `commands` (`commandsFor`: the ones the arguments need). */
export function buildProgram(io: CliIo, commands: readonly CommandModule[]): Command {
  const program = new Command('ibatch')
    .description('Run declarative YAML job files against the AI-influencer media service.')
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // The terminal's width when there is one; 80 in a pipe (stable text).
      getOutHelpWidth: () => io.stdout.columns ?? 80,
      getErrHelpWidth: () => io.stderr.columns ?? 80,
    });
  withExamples(program, [
    ['validate campaign.yaml', 'check the file and every input (free)'],
    ['plan campaign.yaml', 'quote it: cost per step, total, budget, balance (free)'],
    ['run campaign.yaml', 'make what is missing; run it again to resume'],
    ['run jobs/quickstart.yaml --emulator', 'try it on the built-in emulator'],
    ['run --help', 'options, exit codes and environment variables of run'],
  ]);
  for (const command of commands) command.register(program, io);
  pointAtHelp(program);
  return program;
}

/** Runs the CLI and resolves to the exit code; never calls process.exit. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // Known from the start, so every command (`status`, `report`...) redacts it,
  // not only those that go on to connect.
  registerSecret(io.env.IBATCH_API_KEY);
  const program = buildProgram(io, await commandsFor(argv));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return io.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version "fail" with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.invalid;
    }
    // Ours (and aborts) print one line; only a bug shows its stack. A file
    // the system refused is the user's to fix: one line, exit 2, never "network".
    const failure = asLocalFileError(error) ?? ensureIbatchError(error);
    if (failure instanceof UnexpectedError) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      io.stderr.write(`ibatch: unexpected error: ${printableLines(message)}\n`);
    } else {
      io.stderr.write(`ibatch: ${printableLines(failure.message)}\n`);
    }
    return failure.exitCode;
  }
}

export async function main(): Promise<void> {
  // Keep the process title free of arguments (and so of anything secret).
  process.title = 'ibatch';
  // undici parses HTTP with a WebAssembly build of llhttp. V8 re-compiles hot
  // WebAssembly with its optimising tier in the background, which costs
  // memory at the first response parsed (figures: docs/benchmarks.md).
  // A CLI making at most 120 requests a minute gains nothing from it: keep the
  // baseline tier. Must run before the first request compiles the module.
  setFlagsFromString('--liftoff-only');
  const io: CliIo = {
    // A closed pipe or terminal stops the output, never the command.
    stdout: guardedOutput(process.stdout),
    stderr: guardedOutput(process.stderr),
    env: process.env,
    cwd: process.cwd(),
    exitCode: EXIT.ok,
  };
  const code = await runCli(process.argv.slice(2), io);
  process.exitCode = code;
}
