/**
 * What only the PostgreSQL store has: its address, its service functions
 * (held to src/shared/service-url.ts), its job lock across processes, and
 * its failures (unreachable, a refused login) as one typed error that never
 * shows the password. The ops themselves run on both stores in the other
 * files of this folder.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { hostname } from 'node:os';
import { expect, it } from 'vitest';
import {
  JournalLockedError,
  JournalWriteError,
  openJournal,
  openJournalIfAny,
} from '../../src/journal/index.js';
import type { JournalStore } from '../../src/journal/sql.js';
import { canonicalScope, canonicalServiceUrl } from '../../src/shared/index.js';
import { defer, freePort, until } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import { spawnFixture } from './child.js';
import { tempJournal } from './helpers.js';

const server = postgresForFile();

const SPELLINGS = [
  'http://127.0.0.1:8080/api/v1',
  'http://localhost:8080/api/v1/',
  'HTTP://LocalHost:8080/api/v1//',
  'http://127.0.0.2:8080/api/v1',
  'http://[::1]:8080/api/v1',
  'http://app.localhost:8080',
  'https://api.example.com:443/v1',
  'https://API.Example.com./v1/',
  'https://api.example.com:8443/V1',
  'http://api.example.com:80',
  'http://user:pw@api.example.com/v1?x=1#f',
  'not a url',
  '',
];

describePostgres(`postgres store`, () => {
  it("ib_service and ib_scope give src/shared/service-url.ts's answers", async () => {
    const url = await server.newSchema();
    const journal = await tempJournal({}, url);
    journal.close();
    const schema = new URL(url).searchParams.get('schema');
    for (const spelling of SPELLINGS) {
      const scope = `${spelling}#acct`;
      const [row] = await server.query<{ service: string; scope: string }>(
        `SELECT ${schema}.ib_service($1) AS service, ${schema}.ib_scope($2) AS scope`,
        [spelling, scope],
      );
      expect({ spelling, ...row }).toEqual({
        spelling,
        service: canonicalServiceUrl(spelling),
        scope: canonicalScope(scope),
      });
    }
  });

  it('names the journal without its password, and the schema keeps teams apart', async () => {
    const url = await server.newSchema();
    const journal = await tempJournal({}, url);
    expect(journal.path).not.toContain(server.password);
    expect(journal.path).toContain(`${server.user}@127.0.0.1:${server.port}/postgres?schema=`);
    journal.createRun({ runId: 'r', jobName: 'j', jobPath: '/j', jobHash: 'h', budget: null });
    const other = await tempJournal({}, await server.newSchema());
    expect(other.listRuns()).toEqual([]);
    expect(journal.listRuns().map((r) => r.runId)).toEqual(['r']);
  });

  it('a server nobody listens on: a typed error, exit 4, no password in it', async () => {
    const url = `postgres://${server.user}:${server.password}@127.0.0.1:${await freePort()}/postgres`;
    const error = await openJournal(url, { job: 'j' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalWriteError);
    expect(error).toMatchObject({ kind: 'unreachable', exitCode: 4, code: 'journal_unwritable' });
    expect(String((error as Error).message)).toContain('PostgreSQL cannot be reached');
    expect(JSON.stringify(error)).not.toContain(server.password);
    expect(String((error as Error).message)).not.toContain(server.password);
  });

  it('a refused login says so, without the wrong password either', async () => {
    const wrong = 'not-the-password-1234';
    const url = `postgres://${server.user}:${wrong}@127.0.0.1:${server.port}/postgres`;
    const error = await openJournal(url, { readonly: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'unreachable', exitCode: 4 });
    expect(String((error as Error).message)).toMatch(/password authentication failed/);
    expect(String((error as Error).message)).not.toContain(wrong);
  });

  it('a reader of a schema nothing has run in is told so', async () => {
    const url = await server.newSchema();
    await expect(openJournal(url, { readonly: true })).rejects.toThrow(/No journal at .*schema=/);
  });

  it("a journal's session makes no parallel plans, a reader's and a writer's", async () => {
    const url = await server.newSchema();
    const writer = await tempJournal({}, url);
    const reader = await openJournal(url, { readonly: true });
    try {
      for (const journal of [writer, reader]) {
        const { store } = journal as unknown as { store: JournalStore };
        expect(store.stmt('SHOW max_parallel_workers_per_gather').pluck().get()).toBe('0');
      }
    } finally {
      reader.close();
      writer.close();
    }
  });

  it('openJournalIfAny: none in a schema never migrated, the journal once one ran there; one connection either way', async () => {
    const url = await server.newSchema();
    const proxy = await connectionCounter(server.port);
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    const connectionsOf = async (open: () => Promise<void>) => {
      const before = await proxy.connections();
      await open();
      return (await proxy.connections()) - before;
    };
    expect(
      await connectionsOf(async () => {
        expect(await openJournalIfAny(viaProxy.toString())).toBeUndefined();
      }),
    ).toBe(1);

    const writer = await tempJournal({}, url);
    writer.createRun({ runId: 'r', jobName: 'j', jobPath: '/j', jobHash: 'h', budget: null });
    writer.close();
    expect(
      await connectionsOf(async () => {
        const reader = await openJournalIfAny(viaProxy.toString());
        expect(reader?.listRuns().map((r) => r.runId)).toEqual(['r']);
        reader?.close();
      }),
    ).toBe(1);
  });

  it('one runner per job across processes: the refusal names the holder; the lock dies with it', async () => {
    const url = await server.newSchema();
    const holder = spawnFixture('lock-holder.ts', url, 'spring');
    await holder.waitFor((line) => line === 'locked');
    const refused = await openJournal(url, { job: 'spring' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JournalLockedError);
    expect((refused as JournalLockedError).exitCode).toBe(2);
    expect((refused as JournalLockedError).message).toContain(
      `The job "spring" is being run by process ${holder.process.pid} on ${hostname()}`,
    );
    expect((refused as JournalLockedError).message).not.toContain(server.password);
    // Another job runs at the same time.
    const other = await tempJournal({ job: 'autumn' }, url);
    other.close();
    // SIGKILLed: the server drops its connection, and its lock with it.
    await holder.kill9();
    const taken = await tempJournal({ job: 'spring', wait: 10_000 }, url);
    expect(taken.readonly).toBe(false);
  });

  it("a statement's deadline counts the time its process ran: stopped past it, the process goes on; a server slower than it fails", async () => {
    const url = server.url();
    // Ten statements of 0.3 s with a 2 s deadline, the process stopped 3 s in the middle.
    const stopped = spawnFixture('sleepy-statements.ts', url, '10', '2000', '0.3');
    await stopped.waitFor((line) => line === 'ok 1');
    stopped.process.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the stop itself, longer than the deadline
    stopped.process.kill('SIGCONT');
    await stopped.waitFor((line) => line === 'done' || line.startsWith('failed'), 20_000);
    expect(stopped.lines.filter((line) => line.startsWith('failed'))).toEqual([]);
    expect(stopped.lines.at(-1)).toBe('done');
    // A statement that takes longer than the deadline while the process runs: the connection counts as lost.
    const slow = spawnFixture('sleepy-statements.ts', url, '1', '1000', '3');
    await slow.waitFor((line) => line.startsWith('failed') || line === 'done', 20_000);
    expect(slow.lines).toEqual(['failed: PostgreSQL did not answer within 1 s']);
  });

  it('three processes opening one journal in a schema nobody created yet all get it', async () => {
    const url = `${server.url()}?schema=fresh_${process.pid}`;
    const children = ['a', 'b', 'c'].map((job) => spawnFixture('lock-holder.ts', url, job));
    await Promise.all(children.map((child) => child.waitFor((line) => line === 'locked')));
    for (const child of children) await child.kill9();
    const journal = await tempJournal({ readonly: true }, url);
    expect(journal.listRuns()).toEqual([]);
  });
});

/**
 * A TCP relay to the server on `port` that counts the connections made
 * through it, in a process of its own: the journal's open blocks this
 * thread while its worker logs in, so a relay here could never answer. Its
 * count is asked on a second port: the relay accepted every earlier
 * connection before it answers that one.
 */
async function connectionCounter(port: number) {
  const relay = spawn(
    process.execPath,
    [
      '-e',
      `const net = require('node:net');
       let connections = 0;
       const relay = net.createServer((client) => {
         connections += 1;
         const upstream = net.connect(${port}, '127.0.0.1');
         client.pipe(upstream).pipe(client);
         const end = () => { client.destroy(); upstream.destroy(); };
         client.on('error', end).on('close', end);
         upstream.on('error', end).on('close', end);
       });
       const count = net.createServer((asker) => asker.end(String(connections)));
       relay.listen(0, '127.0.0.1', () => count.listen(0, '127.0.0.1', () =>
         process.stdout.write(relay.address().port + ' ' + count.address().port + '\\n')));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  defer(() => {
    relay.kill();
  });
  let out = '';
  relay.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const [relayPort, countPort] = await until(() => /^(\d+) (\d+)\n/.exec(out)?.slice(1), {
    what: 'the relay listening',
  });
  const connections = async () => {
    const asked = connect(Number(countPort), '127.0.0.1').setEncoding('utf8');
    let answer = '';
    for await (const chunk of asked) answer += chunk;
    return Number(answer);
  };
  return { port: Number(relayPort), connections };
}
