import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import type { ManifestRow } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { answeringServer } from '../helpers/answering-store.js';
import {
  freePort,
  jsonLogs,
  manifestRows,
  manifestRowsOf,
  parseCsv,
  runCliCaptured,
  said,
  spawnCli,
  tempDir,
  testEmulator,
  until,
} from '../helpers/index.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { charges, envFor, imageJob, type Workspace, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

async function cli(ws: Workspace, env: NodeJS.ProcessEnv, ...args: string[]) {
  const run = spawnCli(args, { cwd: ws.dir, env: { ...env, AWS_REGION: 'us-east-1' } });
  const exit = await run.exited;
  return { code: exit.code ?? -1, stdout: exit.stdout, stderr: exit.stderr };
}

function currentRows(ws: Workspace): ManifestRow[] {
  return manifestRows(path.join(ws.dir, 'out', 'manifest.jsonl')).filter(
    (row) => row.current && row.file,
  );
}

/** The keys a delivery of `rows` makes: each file, its provenance sidecar, the two manifests. */
const deliveredKeys = (prefix: string, rows: readonly ManifestRow[]) =>
  [
    ...rows.flatMap((r) => [`${prefix}/${r.file}`, `${prefix}/${r.file}.json`]),
    `${prefix}/manifest.csv`,
    `${prefix}/manifest.jsonl`,
  ].sort();

/**
 * Every row's file is in the store under PREFIX/<file> (same bytes, type and
 * sha256 metadata), and its provenance sidecar under PREFIX/<file>.json.
 */
async function expectDelivered(
  s3: TestS3,
  ws: Workspace,
  prefix: string,
  rows: readonly ManifestRow[],
) {
  for (const row of rows) {
    const object = await s3.get(`${prefix}/${row.file}`);
    expect(sha256Hex(object.body), row.file).toBe(row.sha256);
    expect(object.metadata.sha256).toBe(row.sha256);
    // The emulator's sdxl-lite makes PNGs: the type is pinned, not read back from our own manifest.
    expect(row.file).toMatch(/\.png$/);
    expect(object.contentType).toBe('image/png');
    const sidecar = await s3.get(`${prefix}/${row.file}.json`);
    expect(sidecar.contentType).toBe('application/json');
    expect(sidecar.body).toEqual(readFileSync(path.join(ws.dir, 'out', `${row.file}.json`)));
  }
  const manifest = await s3.get(`${prefix}/manifest.jsonl`);
  const delivered = manifestRowsOf(manifest.body.toString('utf8'));
  expect(delivered.map((r) => [r.file, r.sha256]).sort()).toEqual(
    rows.map((r) => [r.file, r.sha256]).sort(),
  );
  expect(manifest.contentType).toBe('application/x-ndjson');
  expect((await s3.get(`${prefix}/manifest.csv`)).contentType).toBe('text/csv; charset=utf-8');
}

const noDuplicates = (keys: readonly string[]) => expect(keys.length).toBe(new Set(keys).size);

describe('delivery to S3-compatible storage', () => {
  let em: RunningEmulator;

  it('run --deliver sends every output, its sidecar and the manifest; deliver restores a removed object and sends nothing else', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const ws = workspace(imageJob({ name: 'deliver-all', n: 3 }));
    const env = { ...envFor(em, SCALE), ...s3.env };
    const run = await cli(ws, env, 'run', 'job.yaml', '--deliver', 's3://media/spring/', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('NodeVersionSupportWarning');
    const result = JSON.parse(run.stdout) as { delivery: Record<string, unknown> };
    expect(result.delivery).toMatchObject({
      destination: 's3://media/spring',
      outputs: 3,
      objects: 8,
      sent: 8,
      unchanged: 0,
    });
    const rows = currentRows(ws);
    expect(rows).toHaveLength(3);
    await expectDelivered(s3, ws, 'spring', rows);
    expect(s3.completedPuts().sort()).toEqual(deliveredKeys('spring', rows));

    // Someone removed one object from the bucket: `deliver` checks the store and sends it, only it.
    const first = rows[0]!;
    await s3.remove(`spring/${first.file}`);
    const before = s3.completedPuts().length;
    const again = await cli(ws, s3.env, 'deliver', 'job.yaml', '--to', 's3://media/spring');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      'delivered: 3 output(s) and the manifest to s3://media/spring (1 object(s) sent, 7 already there)',
    );
    expect(s3.completedPuts().slice(before)).toEqual([`spring/${first.file}`]);
    await expectDelivered(s3, ws, 'spring', rows);
  });

  it('a delivery killed mid-way, then run: nothing is sent twice, nothing is missing', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const ws = workspace(imageJob({ name: 'deliver-kill', n: 6 }));
    const env = { ...envFor(em, SCALE), ...s3.env };
    s3.hold();
    const first = spawnCli(['run', 'job.yaml', '--deliver', 's3://media/k'], {
      cwd: ws.dir,
      env: { ...env, AWS_REGION: 'us-east-1' },
    });
    // Two PUTs let through one at a time, a third provably in flight: kill.
    for (let k = 1; k <= 2; k += 1) {
      await until(() => s3.held() >= 1, { what: `PUT ${k} to arrive`, timeoutMs: 60_000 });
      s3.release(1);
      await until(() => s3.completedPuts().length === k, { what: `PUT ${k} to complete` });
    }
    await until(() => s3.held() >= 1, { what: 'a third PUT in flight' });
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await until(() => s3.held() === 0, { what: 'the killed PUTs to be dropped' });
    s3.releaseAll();
    expect(s3.completedPuts()).toHaveLength(2);

    const second = await cli(ws, env, 'run', 'job.yaml', '--deliver', 's3://media/k', '--json');
    expect(second.code, second.stderr).toBe(0);
    const result = JSON.parse(second.stdout) as { delivery: { sent: number; unchanged: number } };
    // 6 outputs, 6 sidecars and 2 manifests: 14 objects, 2 of them sent before the kill.
    expect(result.delivery).toMatchObject({ sent: 12, unchanged: 2 });
    const puts = s3.completedPuts();
    noDuplicates(puts);
    expect(puts.sort()).toEqual(deliveredKeys('k', currentRows(ws)));
    await expectDelivered(s3, ws, 'k', currentRows(ws));
  });

  it('an unreachable store: exit 4 with its own message, local files intact; a later deliver completes', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(
      imageJob({ name: 'deliver-down', n: 2 }).replace(
        'output: out',
        'output: out\ndeliver: s3://media/p',
      ),
    );
    const port = await freePort();
    const down = {
      AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const run = await cli(ws, { ...envFor(em, SCALE), ...down }, 'run', 'job.yaml');
    expect(run.code, said(run)).toBe(4);
    expect(run.stderr).toContain(
      `could not reach the store http://127.0.0.1:${port} (bucket "media")`,
    );
    expect(run.stderr).toContain('0 of 6 objects are in s3://media/p; nothing local was changed');
    expect(run.stderr).toContain('Resume with `ibatch deliver job.yaml`');
    expect(run.stderr).not.toMatch(/^\s+at /m);
    // The run itself finished: its items and files are intact.
    expect(run.stdout).toContain('2 succeeded');
    const rows = currentRows(ws);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const file = path.join(ws.dir, 'out', row.file ?? '');
      expect(sha256Hex(readFileSync(file))).toBe(row.sha256);
    }

    // Refused credentials: exit 4 too (exit 5 is the service refusing the API key), nothing sent.
    const s3 = await startTestS3();
    const refused = await cli(
      ws,
      { ...s3.env, AWS_ACCESS_KEY_ID: 'NOBODY' },
      'deliver',
      'job.yaml',
    );
    expect(refused.code, said(refused)).toBe(4);
    expect(refused.stderr).toContain(
      `the store ${s3.endpoint} (bucket "media") refused the delivery`,
    );
    expect(refused.stderr).toContain('Check the credentials, the bucket and its permissions');
    expect(s3.completedPuts()).toEqual([]);

    // The store is back: `run` (nothing left to make) delivers everything.
    const later = await cli(ws, { ...envFor(em, SCALE), ...s3.env }, 'run', 'job.yaml');
    expect(later.code, said(later)).toBe(0);
    expect(later.stdout).toContain('(6 object(s) sent, 0 already there)');
    await expectDelivered(s3, ws, 'p', rows);
    for (const row of rows) expect(existsSync(path.join(ws.dir, 'out', row.file ?? ''))).toBe(true);
  });

  it('approved: true delivers exactly the approved outputs', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const ws = workspace(
      imageJob({ name: 'deliver-ok', n: 4 }).replace(
        'output: out',
        'output: out\ndeliver: { to: "s3://media/ok", approved: true }',
      ),
    );
    const run = await cli(ws, { ...envFor(em, SCALE), ...s3.env }, 'run', 'job.yaml');
    expect(run.code, said(run)).toBe(0);
    // Nothing approved yet: only the (empty) manifests went.
    expect(s3.completedPuts().sort()).toEqual(['ok/manifest.csv', 'ok/manifest.jsonl']);
    const rows = currentRows(ws);
    const chosen = [rows[1]!, rows[3]!];
    const approve = await runCliCaptured(
      ['approve', 'job.yaml', ...chosen.map((r) => r.file ?? '')],
      {},
      ws.dir,
    );
    expect(approve.code, said(approve)).toBe(0);
    const deliver = await cli(ws, s3.env, 'deliver', 'job.yaml', '--json');
    expect(deliver.code, said(deliver)).toBe(0);
    expect(JSON.parse(deliver.stdout)).toMatchObject({ approvedOnly: true, outputs: 2, sent: 6 });
    const files = s3
      .completedPuts()
      .filter((key) => !key.startsWith('ok/manifest.'))
      .sort();
    expect(files).toEqual(chosen.flatMap((r) => [`ok/${r.file}`, `ok/${r.file}.json`]).sort());
    await expectDelivered(s3, ws, 'ok', chosen);
  });

  it("only an output's own sidecar goes: a link or a foreign file at its name is neither delivered nor exported", async () => {
    em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const ws = workspace(imageJob({ name: 'deliver-own', n: 3 }));
    const run = await cli(ws, envFor(em, SCALE), 'run', 'job.yaml');
    expect(run.code, said(run)).toBe(0);
    const [linked, foreign, own] = currentRows(ws);
    if (!linked?.file || !foreign?.file || !own?.file) throw new Error('three outputs expected');
    const out = path.join(ws.dir, 'out');
    // A link at one sidecar's name to a readable file outside; another's replaced by someone's notes.
    const secret = path.join(tempDir('outside'), 'secret.json');
    writeFileSync(secret, readFileSync(path.join(out, `${linked.file}.json`)));
    rmSync(path.join(out, `${linked.file}.json`));
    symlinkSync(secret, path.join(out, `${linked.file}.json`));
    writeFileSync(path.join(out, `${foreign.file}.json`), '{"notes":"not provenance"}\n');

    const deliver = await cli(
      ws,
      s3.env,
      'deliver',
      'job.yaml',
      '--to',
      's3://media/own',
      '--json',
    );
    expect(deliver.code, said(deliver)).toBe(0);
    expect(JSON.parse(deliver.stdout)).toMatchObject({ outputs: 3, objects: 6, sent: 6 });
    expect(s3.completedPuts().sort()).toEqual(
      [
        `own/${linked.file}`,
        `own/${foreign.file}`,
        `own/${own.file}`,
        `own/${own.file}.json`,
        'own/manifest.csv',
        'own/manifest.jsonl',
      ].sort(),
    );

    const dir = path.join(ws.dir, 'hand-off');
    const exported = await cli(ws, {}, 'export', 'job.yaml', dir);
    expect(exported.code, said(exported)).toBe(0);
    const sidecars = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('.png.json'),
    );
    expect(sidecars).toEqual([`${own.file}.json`]);
  });

  it("jobs sharing an output folder deliver to one prefix: its manifest lists every job's outputs, after each job's run", async () => {
    em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const ws = workspace(imageJob({ name: 'share-a', n: 2 }));
    // The same step and prompts: the shared folder keeps the two jobs' file names apart.
    writeFileSync(path.join(ws.dir, 'job-b.yaml'), imageJob({ name: 'share-b', n: 2 }));
    const env = { ...envFor(em, SCALE), ...s3.env };
    const deliverTo = ['--deliver', 's3://media/shared'];
    const bucketManifest = async () =>
      manifestRowsOf((await s3.get('shared/manifest.jsonl')).body.toString('utf8'));
    const deliveredJobs: string[] = [];
    for (const [job, name] of [
      ['job.yaml', 'share-a'],
      ['job-b.yaml', 'share-b'],
      ['job.yaml', 'share-a'],
    ] as const) {
      const run = await cli(ws, env, 'run', job, ...deliverTo);
      expect(run.code, run.stderr).toBe(0);
      if (!deliveredJobs.includes(name)) deliveredJobs.push(name);
      // After each run, the prefix's manifest lists every delivered job's current outputs.
      const rows = currentRows(ws).filter((r) => deliveredJobs.includes(r.job ?? ''));
      expect(rows).toHaveLength(2 * deliveredJobs.length);
      const delivered = await bucketManifest();
      expect(delivered.map((r) => [r.job, r.file, r.sha256]).sort(), job).toEqual(
        rows.map((r) => [r.job, r.file, r.sha256]).sort(),
      );
      const csv = (await s3.get('shared/manifest.csv')).body.toString('utf8');
      const table = parseCsv(csv);
      expect(table.records.map((r) => table.cell(r, 'file')).sort()).toEqual(
        rows.map((r) => r.file).sort(),
      );
    }
    const rows = currentRows(ws);
    expect(new Set(rows.map((r) => r.file)).size).toBe(4);
    for (const row of rows) {
      expect(sha256Hex((await s3.get(`shared/${row.file}`)).body), row.file).toBe(row.sha256);
    }
  });

  it("two folders with the same file names, one prefix: the second job's delivery is refused, nothing of the first overwritten", async () => {
    em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const first = workspace(imageJob({ name: 'clash-a', n: 2 }));
    const second = workspace(imageJob({ name: 'clash-b', n: 2 }));
    const env = { ...envFor(em, SCALE), ...s3.env };
    const deliverTo = ['--deliver', 's3://media/clash'];
    expect((await cli(first, env, 'run', 'job.yaml', ...deliverTo)).code).toBe(0);
    const rows = currentRows(first);
    const puts = s3.completedPuts().length;

    const refused = await cli(second, env, 'run', 'job.yaml', ...deliverTo, '--json');
    expect(refused.code, refused.stderr).toBe(4);
    const result = JSON.parse(refused.stdout) as {
      delivery: { error: { code: string; message: string } };
    };
    expect(result.delivery.error.code).toBe('delivery_conflict');
    expect(result.delivery.error.message).toMatch(
      /s3:\/\/media\/clash\/shots\/.+ is an output the job "clash-a" delivered .*the job "clash-b" would overwrite it, so nothing was sent/,
    );
    // Its own names are the first job's: the second's files are made, and kept at home.
    expect(
      currentRows(second)
        .map((r) => r.file)
        .sort(),
    ).toEqual(rows.map((r) => r.file).sort());
    expect(s3.completedPuts().slice(puts)).toEqual([]);
    await expectDelivered(s3, first, 'clash', rows);
  });

  it('ibatch deliver tells what it warns of: a prefix manifest it may not read (403), a chosen file gone', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'deliver-warns', n: 2 }));
    const made = await cli(ws, envFor(em, SCALE), 'run', 'job.yaml');
    expect(made.code, made.stderr).toBe(0);
    const [gone] = currentRows(ws);
    rmSync(path.join(ws.dir, 'out', gone!.file!));
    // A store that answers every read 403 and takes every write.
    const store = await answeringServer({ head: 404, get: 403, put: 200 });
    const env = {
      AWS_ENDPOINT_URL_S3: store.endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const sent = await cli(ws, env, 'deliver', 'job.yaml', '--to', 's3://media/warned', '--json');
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ outputs: 1, missing: [gone!.file] });
    const warnings = jsonLogs(sent.stderr)
      .filter((line) => line.level === 40)
      .map((line) => line.msg);
    expect(warnings).toEqual([
      `${gone!.file} is not in the output folder: not delivered`,
      expect.stringContaining('s3://media/warned/manifest.jsonl could not be read (HTTP 403'),
    ]);
  });

  it('a malformed store endpoint is exit 2 before anything is spent', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const bad = { AWS_ENDPOINT_URL_S3: 'ftp://store.example' };
    const flag = workspace(imageJob({ name: 'deliver-bad-flag', n: 2 }));
    const viaFlag = await cli(
      flag,
      { ...envFor(em, SCALE), ...bad },
      'run',
      'job.yaml',
      '--deliver',
      's3://media/x',
    );
    const inJob = workspace(
      imageJob({ name: 'deliver-bad-job', n: 2 }).replace(
        'output: out',
        'output: out\ndeliver: s3://media/x',
      ),
    );
    const viaJob = await cli(inJob, { ...envFor(em, SCALE), ...bad }, 'run', 'job.yaml');
    for (const result of [viaFlag, viaJob]) {
      expect(result.code, said(result)).toBe(2);
      expect(result.stderr).toContain('AWS_ENDPOINT_URL_S3 must be an http(s) URL');
    }
    expect(await charges(em)).toHaveLength(0);
  });
});
