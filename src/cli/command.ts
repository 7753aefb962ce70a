/**
 * The shape every CLI command module has. Commands parse nothing themselves
 * beyond their own options: they call the library and print. Only `main.ts`
 * turns errors into exit codes and calls `process.exit`.
 */
import type { Command } from 'commander';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
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
