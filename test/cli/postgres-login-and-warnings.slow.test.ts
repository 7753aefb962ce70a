/**
 * What a PostgreSQL journal's commands print besides their own words: no
 * Node process warning (node-postgres deprecates queueing statements on one
 * connection and reading `~/.pgpass` itself, each with a warning on the
 * user's terminal), and the password `~/.pgpass` gives, as docs/journal.md
 * promises, when neither the URL nor PGPASSWORD has one. Every spawned CLI
 * is also checked for warnings by `spawnCli`; these tests make the reads and
 * the login that used to warn. Spawned processes need `npm run build`.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { buildLargeOutputs } from '../../bench/large-outputs.js';
import { processWarningIn, spawnCli, tempDir } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';

const server = postgresForFile();

/**
 * A PostgreSQL journal holding one finished run of `items` outputs (the
 * large-job fixture, files on disk), written to SQLite and copied over by
 * `ibatch journal copy`: written on PostgreSQL one statement at a time,
 * thousands of items take minutes.
 */
async function journalWithRun(items: number) {
  const dir = tempDir('pg-journal');
  const { journalPath, runId, out } = await buildLargeOutputs(dir, items);
  const url = await server.newSchema();
  const copy = spawnCli(['journal', 'copy', journalPath, url], { cwd: dir });
  const copied = await copy.exited;
  expect(copied.code, copied.stderr).toBe(0);
  return { dir, out, runId, url };
}

describePostgres('a PostgreSQL journal, as its commands print', () => {
  it('report of a 2,500-item run (pages read ahead) rebuilds every row and prints no Node warning', async () => {
    const items = 2500;
    const { dir, out, runId, url } = await journalWithRun(items);
    const report = spawnCli(['report', runId, '--journal', url, '--out', out], { cwd: dir });
    const { code, stderr } = await report.exited;
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(`${items} manifest row(s)`);
    expect(processWarningIn(stderr)).toBeUndefined();
  }, 60_000);

  it('~/.pgpass gives the password when neither the URL nor PGPASSWORD does, with no warning', async () => {
    const { runId, url: withPassword } = await journalWithRun(3);
    const url = new URL(withPassword);
    const home = tempDir('pg-home');
    const pgpass = path.join(home, '.pgpass');
    writeFileSync(pgpass, `127.0.0.1:${url.port}:postgres:${url.username}:${server.password}\n`);
    // libpq's rule, which the reader keeps: a file others may read is ignored.
    chmodSync(pgpass, 0o600);
    url.password = '';
    const status = spawnCli(['status', '--json', '--journal', url.toString()], {
      cwd: home,
      env: { HOME: home },
    });
    const { code, stdout, stderr } = await status.exited;
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ runs: [{ runId }] });
    expect(processWarningIn(stderr)).toBeUndefined();

    // Without the file the login is refused: the password above came from it.
    const refused = spawnCli(['status', '--journal', url.toString()], {
      cwd: home,
      env: { HOME: tempDir('pg-no-home') },
    });
    expect((await refused.exited).code).toBe(4);
  }, 60_000);
});
