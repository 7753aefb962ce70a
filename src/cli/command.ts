/**
 * The shape every CLI command module has. Commands parse nothing themselves
 * beyond their own options: they call the library and print, and throw
 * typed errors. Only `main.ts` turns errors into exit codes; it sets
 * `process.exitCode` and never calls `process.exit`, so output still
 * buffered in stdout/stderr (a pipe) is flushed before the process ends.
 */
import type { Command } from 'commander';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** `columns`/`rows`: the terminal's size when stderr is one (the progress block fits it). */
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  readonly env: NodeJS.ProcessEnv;
  /** Where the process is running from: relative paths resolve against it. */
  readonly cwd: string;
  /** Set by a command to the exit code the process should end with. */
  exitCode: number;
}

export interface CommandModule {
  /** Adds the command (with its options and action) to the program. */
  register(program: Command, io: CliIo): void;
}
