/**
 * Help: every command's `--help` shows examples, `run`'s the exit
 * codes and the environment variables, argument names read alike, and a
 * usage mistake prints the error and one line pointing at the help instead
 * of the whole help. The help texts are kept as file snapshots
 * (__snapshots__/help.test.ts.snap): a change to one shows in review.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../src/cli/commands/index.js';
import { buildProgram } from '../../src/cli/main.js';
import { EXIT } from '../../src/shared/index.js';
import { capture, repoPath, runCliCaptured, tempDir } from '../helpers/index.js';

const COMMAND_NAMES = buildProgram(
  {
    stdout: capture(),
    stderr: capture(),
    env: {},
    cwd: '.',
    exitCode: 0,
  },
  await commandsFor(),
).commands.map((command) => command.name());

async function help(args: readonly string[]): Promise<string> {
  const result = await runCliCaptured([...args, '--help'], {}, tempDir('help'));
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  return result.stdout;
}

describe('--help', () => {
  it('of a command loads that command alone, under its name (the others load on demand)', async () => {
    for (const name of COMMAND_NAMES) {
      const io = { stdout: capture(), stderr: capture(), env: {}, cwd: '.', exitCode: 0 };
      const program = buildProgram(io, await commandsFor([name, '--help']));
      expect(program.commands.map((command) => command.name())).toEqual([name]);
    }
    expect(await commandsFor(['--version'])).toEqual([]);
  });

  it('knows the commands of the interface', () => {
    expect(COMMAND_NAMES).toEqual(
      expect.arrayContaining(['validate', 'plan', 'run', 'status', 'report', 'emulator']),
    );
  });

  it.each(['', ...COMMAND_NAMES])('of `ibatch %s` shows examples of it', async (name) => {
    const text = await help(name === '' ? [] : [name]);
    expect(text).toContain('\nExamples:\n');
    expect(text).toMatch(new RegExp(`^ {2}\\$ ibatch ${name}`, 'm'));
    // Examples fit an 80-column terminal like the rest of the help.
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text).toMatchSnapshot();
  });

  it("of `run` lists every exit code and the environment variables of the README's table", async () => {
    const text = await help(['run']);
    const codes = text.slice(text.indexOf('Exit codes:'), text.indexOf('Environment:'));
    for (const code of Object.values(EXIT))
      expect(codes).toMatch(new RegExp(`^ {2}${code} +\\w`, 'm'));
    const readme = readFileSync(repoPath('README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('| what | flag | environment |'));
    const names = [...new Set(table.slice(0, table.indexOf('\n\n')).match(/IBATCH_[A-Z_]+/g))];
    expect(names.length).toBeGreaterThanOrEqual(6);
    const env = text.slice(text.indexOf('Environment:'));
    for (const name of [...names, 'NO_COLOR'])
      expect(env).toMatch(new RegExp(`^ {2}${name} `, 'm'));
  });

  it('names the arguments alike: `<job>` for a job file, lower case everywhere', async () => {
    for (const name of COMMAND_NAMES) {
      const usage = (await help([name])).split('\n')[0] ?? '';
      expect(usage).not.toMatch(/[<[][A-Z_]+[\]>]/);
      if (['validate', 'plan', 'run'].includes(name)) expect(usage).toMatch(/ <job>$/);
    }
  });

  it('explains the two --time-scale defaults, which keep the emulator and the limits in step', async () => {
    const run = (await help(['run'])).replace(/\s+/g, ' ');
    const emulator = (await help(['emulator'])).replace(/\s+/g, ' ');
    expect(run).toMatch(
      /--time-scale <n> with --emulator: .* our default limits, .*\(default: 10\)/,
    );
    expect(emulator).toMatch(
      /--time-scale <n> .*matching a run's default --limits.*\(default: 1\)/,
    );
  });
});

describe('a usage mistake', () => {
  it.each([
    [['run', 'job.yaml', '--bogus'], "error: unknown option '--bogus'", 'see ibatch run --help'],
    [['plan'], "error: missing required argument 'job'", 'see ibatch plan --help'],
    [['frob'], "error: unknown command 'frob'", 'see ibatch --help'],
  ])(
    '`ibatch %j` prints the error and one line pointing at the help',
    async (args, error, hint) => {
      const result = await runCliCaptured(args, {}, tempDir('usage'));
      expect(result.code).toBe(EXIT.invalid);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(`${error}\n${hint}\n`);
    },
  );
});
