/**
 * docs/journal.md's privileges, as a team sets them up: the journal's owner
 * migrates once (a first `run`), then a role with only the documented
 * read/write grants runs jobs and reads `status` against the emulator. A role
 * without CREATE on a fresh schema gets one clear sentence ending with the
 * grants to give (not a file journal's advice), no stack trace and no password. Spawned processes need `npm run build`.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import {
  expectNoStack,
  runCliCaptured,
  spawnCli,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const server = postgresForFile();

/** A login role with no privileges yet; its URL carries no password (PGPASSWORD does). */
async function newRole(
  schemaUrl: string,
): Promise<{ name: string; password: string; url: string }> {
  const name = `r${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await server.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
  const url = new URL(schemaUrl);
  url.username = name;
  url.password = '';
  return { name, password, url: url.toString() };
}

describePostgres(`PostgreSQL journal privileges`, () => {
  it('after the owner migrated, a read/write role runs and reads status', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const env = envFor(em, SCALE);
    const ownerUrl = await server.newSchema();
    const schema = new URL(ownerUrl).searchParams.get('schema') ?? '';
    // Created once by the owner: a first run migrates the schema.
    const first = workspace(imageJob({ name: 'owner-job', n: 1 }));
    const migrated = await runCliCaptured(
      ['run', first.jobPath, '--journal', ownerUrl],
      env,
      first.dir,
    );
    expect(migrated.code, migrated.stderr).toBe(0);

    const role = await newRole(ownerUrl);
    for (const grant of [
      `GRANT USAGE ON SCHEMA ${schema} TO ${role.name}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role.name}`,
      `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role.name}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${role.name}`,
    ])
      await server.query(grant);
    const roleEnv = { ...env, PGPASSWORD: role.password };
    const before = (await charges(em)).length;
    const N = 3;
    const ws = workspace(imageJob({ name: 'writer-job', n: N }));
    // Processes of their own: PGPASSWORD is read from the process's environment.
    const cli = async (args: string[], cwd: string) => {
      const child = spawnCli(args, { env: roleEnv, cwd });
      const { code } = await child.exited;
      return { code, stdout: child.stdout(), stderr: child.stderr() };
    };
    const run = await cli(['run', ws.jobPath, '--journal', role.url], ws.dir);
    expect(run.code, run.stderr).toBe(0);
    expectOneChargePerItem((await charges(em)).slice(before), N);

    const status = await cli(['status', '--json', '--journal', role.url], tempDir('elsewhere'));
    expect(status.code, status.stderr).toBe(0);
    const { runs } = JSON.parse(status.stdout) as { runs: { jobName: string; status: string }[] };
    expect(runs.map((r) => [r.jobName, r.status]).sort()).toEqual([
      ['owner-job', 'completed'],
      ['writer-job', 'completed'],
    ]);
    expect(run.stdout + run.stderr + status.stdout + status.stderr).not.toContain(role.password);
  }, 90_000);

  it('a role without CREATE on a fresh schema: one clear sentence, nothing sent, no password', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ownerUrl = await server.newSchema();
    const role = await newRole(ownerUrl);
    const url = new URL(role.url);
    url.password = role.password;
    const ws = workspace(imageJob({ name: 'no-create', n: 1 }));
    const run = await runCliCaptured(
      ['run', ws.jobPath, '--journal', url.toString()],
      envFor(em, SCALE),
      ws.dir,
    );
    expect([2, 4], run.stderr).toContain(run.code);
    expect(run.stderr).toMatch(/permission denied/i);
    // PostgreSQL's advice (the grants, where docs/journal.md lists them), not a file's.
    expect(run.stderr).toMatch(/lacks a privilege/);
    expect(run.stderr).toMatch(/CREATE on the schema/);
    expect(run.stderr).toContain('docs/journal.md');
    expect(run.stderr).not.toMatch(/writable/);
    expectNoStack(run.stderr);
    expect(run.stdout + run.stderr).not.toContain(role.password);
    expect(await charges(em)).toEqual([]);
  }, 60_000);
});
