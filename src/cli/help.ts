/**
 * What `--help` adds to commander's usage and options: examples on every
 * command, and on `run` the exit codes and the environment variables (the
 * tables of the interface, docs: README "Using it"). A mistake in the
 * arguments prints the error and one line pointing at the help, not the help.
 */
import type { Command } from 'commander';
import { EXIT } from '../shared/index.js';

/** An example: the command line after `ibatch`, and what it does. */
export type Example = readonly [args: string, does: string];

/** Adds an "Examples:" section at the end of the command's help. */
export function withExamples(command: Command, examples: readonly Example[]): Command {
  // What it does above the command line: both fit 80 columns.
  const lines = examples.map(([args, does]) => `  # ${does}\n  $ ibatch ${args}`);
  return command.addHelpText('after', `\nExamples:\n${lines.join('\n\n')}`);
}

/** The meaning of every exit code (interface: "Exit codes"); a new code must be described here. */
const EXIT_MEANINGS: Readonly<Record<keyof typeof EXIT, string>> = {
  ok: 'every item succeeded (or nothing was left to do)',
  itemsFailed: 'the run finished but some items failed for good; the rest are done',
  invalid: 'invalid job file, arguments or inputs; nothing was spent',
  credits: 'stopped by credits (budget, --max-spend or the balance); resumable',
  unreachable: 'service unreachable, or the --deliver/deliver: store failed; resumable',
  unauthorized: 'the API key was refused: fix, then resume',
  interrupted: 'interrupted (SIGINT, SIGTERM, SIGHUP); resumable',
};

/** The environment variables ibatch reads (interface: "Configuration"). */
const ENVIRONMENT: readonly (readonly [name: string, meaning: string])[] = [
  ['IBATCH_API_KEY', 'the API key (never a flag); needed unless --emulator'],
  ['IBATCH_BASE_URL', 'service base URL including /api/v1 (--base-url)'],
  ['IBATCH_JOURNAL', 'journal file (--journal); default .ibatch/journal.db'],
  ['IBATCH_LIMITS', 'rate limits (--limits)'],
  ['IBATCH_REDIS_URL', 'share the limits through Redis (--limits-store)'],
  ['IBATCH_LOG_FORMAT', 'pretty or json (--log-format)'],
  ['IBATCH_TRAINING_ESTIMATE', 'credits of a training until one is charged'],
  ['IBATCH_NOTIFY_SECRET', 'signs --notify bodies (X-Ibatch-Signature)'],
  ['IBATCH_LOG_LEVEL', 'least level: debug, info (default), warn, error'],
  ['AWS_ENDPOINT_URL_S3', '--deliver endpoint (or AWS_ENDPOINT_URL), path-style'],
  ['AWS_ACCESS_KEY_ID', '--deliver credentials as the AWS SDK finds them'],
  ['NO_COLOR', 'set to any value: no colour'],
];

/** Adds the exit codes and the environment variables to `run`'s help. */
export function withRunReference(command: Command): Command {
  const codes = (Object.keys(EXIT) as (keyof typeof EXIT)[]).map(
    (name) => `  ${String(EXIT[name]).padEnd(4)} ${EXIT_MEANINGS[name]}`,
  );
  const width = Math.max(...ENVIRONMENT.map(([name]) => name.length));
  const env = ENVIRONMENT.map(([name, meaning]) => `  ${name.padEnd(width)}  ${meaning}`);
  return command.addHelpText(
    'after',
    `\nExit codes:\n${codes.join('\n')}\n\nEnvironment:\n${env.join('\n')}`,
  );
}

/**
 * After a usage error commander prints the error, then this one line per
 * command (instead of the whole help, which pushed the error out of sight).
 */
export function pointAtHelp(program: Command): void {
  program.showHelpAfterError('see ibatch --help');
  for (const command of program.commands) {
    command.showHelpAfterError(`see ibatch ${command.name()} --help`);
  }
}
