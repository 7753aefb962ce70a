/**
 * Error paths repeat no secret and drive no terminal. An env file given as
 * the job file (`ibatch run ibatch.env`) is refused without its key; and a
 * fuzz test feeds validate, plan and run hostile job files, env files and
 * flag values (`--notify`, `--deliver`, `--out`, `--base-url`) made of the
 * key, URL credentials and control characters: stdout and stderr, pretty and
 * JSON logs, with and without `--json`, hold none of them raw; credentials in
 * `--notify` and `--deliver` URLs are refused in one line without being
 * repeated. Nothing is charged (the ledger).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCliCaptured, spawnCli, tempDir } from '../helpers/index.js';
import { emulator } from './helpers.js';

const PASSWORD = 'pw5ecretZ9';
const AWS_SECRET = 's3cr3tK3yQ7';
/** A key of another account (or the production one): not the registered key, same shape. */
const OTHER_KEY = `ifk_live_${'7e'.repeat(16)}`;
const ESC = '\u001b';
const BEL = '\u0007';

/** Pieces every hostile value is made of. */
function hostilePieces(key: string): fc.Arbitrary<string> {
  return fc.constantFrom(
    key,
    OTHER_KEY,
    `IBATCH_API_KEY=${key}`,
    `http://user:${PASSWORD}@127.0.0.1:1/hook`,
    `https://${PASSWORD}@127.0.0.1:1/api/v1`,
    `s3://AKIAABCDEFGHIJKLMNOP:${AWS_SECRET}@bucket/p`,
    `${ESC}]0;pwned${BEL}${ESC}[2J`,
    `${ESC}[31m`,
    'x'.repeat(200),
    '\n',
    ' ',
    'plain',
  );
}

function hostile(key: string): fc.Arbitrary<string> {
  return fc
    .array(fc.oneof(hostilePieces(key), fc.string({ maxLength: 6 })), {
      minLength: 1,
      maxLength: 4,
    })
    .map((parts) => parts.join(''));
}

/** What must never appear raw in anything the CLI prints. */
function expectClean(text: string, key: string, context: string): void {
  for (const secret of [key, key.slice('ifk_live_'.length), OTHER_KEY, PASSWORD, AWS_SECRET]) {
    expect(text.includes(secret), `${context}: ${secret} in ${JSON.stringify(text)}`).toBe(false);
  }
  expect(text.includes(ESC), `${context}: raw ESC in ${JSON.stringify(text)}`).toBe(false);
  expect(text.includes(BEL), `${context}: raw BEL in ${JSON.stringify(text)}`).toBe(false);
}

const yamlString = (value: string) => JSON.stringify(value);

/** Job files that are wrong somewhere a message quotes: each is refused before anything is spent. */
function hostileJob(value: string, key: string): fc.Arbitrary<string> {
  const v = yamlString(value);
  return fc.constantFrom(
    `IBATCH_API_KEY=${key}\nIBATCH_BASE_URL=${value}\n`,
    `${value}\n`,
    `version: 1\nname: ${v}\ngenerations:\n  - id: a\n    model: ${v}\n    input:\n      prompt: ${v}\n`,
    `version: 1\nname: fuzz\ngenerations:\n  - id: a\n    model: flux-portrait\n    input:\n      prompt: ${v}\n      seed: ${v}\n`,
    `version: 1\nname: fuzz\n${v}: 1\ngenerations: []\n`,
    `version: 1\nname: fuzz\ndeliver: ${v}\ngenerations:\n  - id: a\n    model: flux-portrait\n    input:\n      prompt: p\n      aspectRatio: ${v}\n`,
    `version: 1\nname: fuzz\nnotify: [${v}]\ngenerations:\n  - id: a\n    model: flux-portrait\n    input:\n      prompt: "{{ ${value.replace(/[{}"\\\n]/g, '')} }}"\n`,
  );
}

describe('error paths repeat no secret', () => {
  it('an env file given as the job file: validate, plan and run (pretty and --json) never print the key', async () => {
    const em = await emulator();
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const dir = tempDir('env-as-job');
    writeFileSync(
      path.join(dir, 'ibatch.env'),
      `IBATCH_API_KEY=${account.apiKey}\nIBATCH_BASE_URL=${em.baseUrl}\n`,
    );
    writeFileSync(path.join(dir, 'prod.env'), `IBATCH_API_KEY=${OTHER_KEY}\n`);
    for (const file of ['ibatch.env', 'prod.env']) {
      for (const command of ['validate', 'plan', 'run']) {
        for (const json of [[], ['--json']]) {
          const cli = spawnCli([command, file, '--base-url', em.baseUrl, ...json], {
            cwd: dir,
            env: { IBATCH_API_KEY: account.apiKey },
          });
          const exit = await cli.exited;
          const context = `${command} ${file} ${json.join('')}`;
          expect(exit.code, `${context}: ${cli.output()}`).toBe(2);
          expect(cli.output()).toContain('expected a mapping');
          expectClean(cli.output(), account.apiKey, context);
        }
      }
    }
    expect(await em.admin.ledger(account.id)).toEqual([]);
  }, 120_000);

  it('credentials in --notify and --deliver URLs: refused (exit 2, one line, the fix), never echoed; a wrong scheme is said plainly', async () => {
    const em = await emulator();
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const dir = tempDir('url-credentials');
    const job = path.join(dir, 'job.yaml');
    writeFileSync(
      job,
      'version: 1\nname: creds\ngenerations:\n  - id: a\n    model: flux-portrait\n    input:\n      prompt: p\n',
    );
    const cases: ReadonlyArray<readonly [readonly string[], string]> = [
      [
        ['run', job, '--notify', `http://user:${PASSWORD}@127.0.0.1:1/hook`],
        '`--notify` must not carry a user name or password',
      ],
      [
        ['run', job, '--deliver', `s3://AKIAABCDEFGHIJKLMNOP:${AWS_SECRET}@bucket/p`],
        '`--deliver` must not carry credentials',
      ],
      [
        ['deliver', job, '--to', `s3://AKIAABCDEFGHIJKLMNOP:${AWS_SECRET}@bucket/p`],
        '`--to` must not carry credentials',
      ],
      [
        ['run', job, '--notify', 'ftp://127.0.0.1:1/hook'],
        '`--notify` must be an http or https URL, not ftp',
      ],
    ];
    for (const [args, says] of cases) {
      for (const json of [[], ['--json']]) {
        const cli = spawnCli([...args, '--base-url', em.baseUrl, ...json], {
          cwd: dir,
          env: { IBATCH_API_KEY: account.apiKey },
        });
        const exit = await cli.exited;
        const context = [...args, ...json].join(' ');
        expect(exit.code, `${context}: ${cli.output()}`).toBe(2);
        expect(exit.stderr.trim().split('\n'), context).toHaveLength(1);
        expect(exit.stderr, context).toContain(`ibatch: ${says}`);
        expect(exit.stderr, context).not.toContain('does be');
        expect(exit.stderr, context).not.toContain('AKIAABCDEFGHIJKLMNOP');
        expectClean(cli.output(), account.apiKey, context);
      }
    }
    expect(await em.admin.ledger(account.id)).toEqual([]);
  }, 120_000);

  it('fuzz: hostile job files and flag values through validate, plan and run', async () => {
    const em = await emulator();
    const account = em.accounts[0];
    if (!account) throw new Error('no account');
    const key = account.apiKey;
    // A run that gets past every check meets an empty balance: still an error path.
    await em.admin.setCredits(account.id, 0);
    const dir = tempDir('error-fuzz');
    writeFileSync(path.join(dir, 'afile'), 'a file, not a folder');
    mkdirSync(path.join(dir, 'jobs'));
    const good = path.join(dir, 'good.yaml');
    writeFileSync(
      good,
      'version: 1\nname: good\ngenerations:\n  - id: a\n    model: flux-portrait\n    input:\n      prompt: p\n',
    );
    let n = 0;
    const invocation = hostile(key).chain((value) =>
      fc.record({
        value: fc.constant(value),
        command: fc.constantFrom('validate', 'plan', 'run'),
        json: fc.boolean(),
        logFormat: fc.constantFrom('pretty', 'json'),
        job: fc.option(hostileJob(value, key), { nil: undefined }),
        flag: fc.constantFrom<readonly string[]>(
          [],
          ['--notify', value],
          ['--deliver', value],
          ['--deliver', `s3://AKIAABCDEFGHIJKLMNOP:${AWS_SECRET}@${value}`],
          ['--out', `afile/${value}`],
          ['--base-url', value],
          ['--base-url', `http://u:${PASSWORD}@127.0.0.1:1/${value}`],
        ),
      }),
    );
    await fc.assert(
      fc.asyncProperty(invocation, async ({ command, json, logFormat, job, flag }) => {
        let jobPath = good;
        if (job !== undefined) {
          n += 1;
          jobPath = path.join(dir, 'jobs', `job-${n}.yaml`);
          writeFileSync(jobPath, job);
        }
        // A run needs something wrong to stay an error path: a hostile file or flag.
        if (job === undefined && flag.length === 0) return;
        const options = flag[0] === '--base-url' ? flag : ['--base-url', em.baseUrl, ...flag];
        const args = [command, jobPath, ...options, ...(json ? ['--json'] : [])];
        const result = await runCliCaptured(
          args,
          { IBATCH_API_KEY: key, IBATCH_LOG_FORMAT: logFormat },
          dir,
        );
        expectClean(
          `${result.stdout}\n${result.stderr}`,
          key,
          `${logFormat} logs: ${args.join(' ')}`,
        );
      }),
      { numRuns: 150 },
    );
    expect(await em.admin.ledger(account.id)).toEqual([]);
  }, 300_000);
});
