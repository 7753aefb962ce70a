/**
 * A team's shared PostgreSQL journal read from a third machine: machine A
 * runs the job of client acme, machine B the job of client globex (distinct
 * `HOSTNAME`, distinct folders, one schema). From a third folder holding only
 * the two job files: `status` lists both runs, `costs --by tag:client` equals
 * the emulator's ledger, `review --json` lists A's outputs, `export`,
 * `deliver` and the review page fetch the files they lack from the service (sha256 as the
 * manifests on A and B say), and a `reject` made there is honoured by the next
 * run on A: one new charge, for the rejected item. Spawned processes need
 * `npm run build`.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/emulator/index.js';
import type { ManifestRow } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import {
  firstStdoutLine,
  manifestRows,
  manifestRowsOf,
  spawnCli,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import { startTestS3 } from '../helpers/s3-server.js';
import {
  charges,
  chargesPerItem,
  envFor,
  imageJob,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const server = postgresForFile();

/** imageJob with the client's tag, writing to out-CLIENT. */
const clientJob = (client: string, n: number) =>
  imageJob({ name: `${client}-shots`, n }).replace(
    'output: out',
    `tags: { client: ${client} }\noutput: out-${client}`,
  );

async function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawnCli(args, { env: { ...env, AWS_REGION: 'us-east-1' }, cwd });
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

const currentRows = (ws: Workspace, client: string): ManifestRow[] =>
  manifestRows(path.join(ws.dir, `out-${client}`, 'manifest.jsonl')).filter(
    (row) => row.current && row.file,
  );

const netOf = (entries: readonly LedgerEntry[]) =>
  entries.reduce((n, e) => n + (e.type === 'charge' ? e.amount : -e.amount), 0);

describePostgres(`a third machine reads a shared PostgreSQL journal`, () => {
  it('status, costs by client, review, export and deliver see both machines; a reject there is remade by A', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const url = await server.newSchema();
    const env = { ...envFor(em, SCALE), ...s3.env, IBATCH_JOURNAL: url };
    const a = workspace(clientJob('acme', 3));
    const b = workspace(clientJob('globex', 2));
    const onA = { ...env, HOSTNAME: 'machine-a' };
    const runA = await cli(['run', a.jobPath], a.dir, onA);
    expect(runA.code, runA.stderr).toBe(0);
    const runB = await cli(['run', b.jobPath], b.dir, { ...env, HOSTNAME: 'machine-b' });
    expect(runB.code, runB.stderr).toBe(0);
    const rowsA = currentRows(a, 'acme');
    const rowsB = currentRows(b, 'globex');
    expect(rowsA).toHaveLength(3);
    expect(rowsB).toHaveLength(2);

    // The third folder: the two job files, nothing else.
    const third = tempDir('third');
    writeFileSync(path.join(third, 'acme.yaml'), readFileSync(a.jobPath));
    writeFileSync(path.join(third, 'globex.yaml'), readFileSync(b.jobPath));
    const onC = { ...env, HOSTNAME: 'machine-c' };

    const status = await cli(['status', '--json'], third, onC);
    expect(status.code, status.stderr).toBe(0);
    const { runs } = JSON.parse(status.stdout) as {
      runs: { jobName: string; status: string }[];
    };
    expect(runs.map((r) => [r.jobName, r.status]).sort()).toEqual([
      ['acme-shots', 'completed'],
      ['globex-shots', 'completed'],
    ]);

    const ledger = await charges(em);
    const ofJob = (job: string) =>
      ledger.filter((e) => e.idempotencyKey?.startsWith(`ib1-${job}-`));
    const costs = await cli(['costs', '--by', 'tag:client', '--json'], third, onC);
    expect(costs.code, costs.stderr).toBe(0);
    const { groups } = JSON.parse(costs.stdout) as {
      groups: { key: string | null; net: number; generations: number }[];
    };
    expect(groups.map((g) => [g.key, g.net, g.generations]).sort()).toEqual([
      ['acme', netOf(ofJob('acme-shots')), 3],
      ['globex', netOf(ofJob('globex-shots')), 2],
    ]);

    // The review page's listing: A's outputs, read in this machine's folder.
    const review = await cli(['review', 'acme.yaml', '--json'], third, onC);
    expect(review.code, review.stderr).toBe(0);
    const listing = JSON.parse(review.stdout) as {
      outputDir: string;
      outputs: { file: string | null }[];
    };
    expect(listing.outputDir).toBe(path.join(third, 'out-acme'));
    expect(listing.outputs.map((o) => o.file).sort()).toEqual(rowsA.map((r) => r.file).sort());

    // export: A's files, fetched from the service, with A's bytes.
    const exported = await cli(['export', 'acme.yaml', 'hand-off'], third, onC);
    expect(exported.code, exported.stderr).toBe(0);
    for (const row of rowsA) {
      const bytes = readFileSync(path.join(third, 'hand-off', row.file ?? ''));
      expect(sha256Hex(bytes), row.file).toBe(row.sha256);
    }

    // deliver: B's files, fetched here, in the store with B's bytes.
    const delivered = await cli(
      ['deliver', 'globex.yaml', '--to', 's3://media/globex'],
      third,
      onC,
    );
    expect(delivered.code, delivered.stderr).toBe(0);
    for (const row of rowsB) {
      const object = await s3.get(`globex/${row.file}`);
      expect(sha256Hex(object.body), row.file).toBe(row.sha256);
    }
    const manifest = manifestRowsOf((await s3.get('globex/manifest.jsonl')).body.toString());
    expect(manifest.map((r) => [r.file, r.sha256]).sort()).toEqual(
      rowsB.map((r) => [r.file, r.sha256]).sort(),
    );

    // The review page, with none of B's files here: it fetches them, then serves B's bytes.
    rmSync(path.join(third, 'out-globex'), { recursive: true });
    const page = spawnCli(['review', 'globex.yaml'], { env: onC, cwd: third });
    const pageUrl = new URL(await firstStdoutLine(page));
    const headers = { 'X-Ibatch-Token': pageUrl.searchParams.get('token') ?? '' };
    for (const row of rowsB) {
      const served = await fetch(new URL(`/files/${row.file}`, pageUrl), { headers });
      expect(served.status, row.file).toBe(200);
      expect(sha256Hex(Buffer.from(await served.arrayBuffer())), row.file).toBe(row.sha256);
    }
    page.child.kill('SIGINT');
    expect((await page.exited).code, page.stderr()).toBe(0);

    // A reject made on the third machine: the next run on A makes that item again, only it.
    const rejected = rowsA[0]!;
    const reject = await cli(['reject', 'acme.yaml', rejected.file ?? ''], third, onC);
    expect(reject.code, reject.stderr).toBe(0);
    const before = (await charges(em)).length;
    const again = await cli(['run', a.jobPath], a.dir, onA);
    expect(again.code, again.stderr).toBe(0);
    const after = await charges(em);
    const remade = after.slice(before);
    expect(remade).toHaveLength(1);
    const original = after.find((e) => e.generationIds?.includes(rejected.generationId ?? ''));
    expect(original).toBeDefined();
    const itemOf = (e: LedgerEntry) => [...chargesPerItem([e]).keys()][0]!.split('-').slice(-2);
    expect(itemOf(remade[0]!)).toEqual(itemOf(original!));
    // The rejected file is moved aside (review: rejected); the new one is current.
    const rows = manifestRows(path.join(a.dir, 'out-acme', 'manifest.jsonl'));
    const ofItem = rows.filter((r) => r.item === rejected.item);
    expect(ofItem.map((r) => [r.runId === rejected.runId, r.current, r.review ?? null])).toEqual([
      [true, false, 'rejected'],
      [false, true, null],
    ]);
  }, 120_000);
});
