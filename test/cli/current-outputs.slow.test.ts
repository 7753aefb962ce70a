/**
 * What a team hands over is what the job file says (interface: "Re-running"),
 * as a user works, with full `ibatch` processes against the emulator, the
 * ledger as the judge of what was made: a 30-row product CSV named by
 * `key: sku`; one row's text changed and another row deleted. `plan` says
 * changed 1 / removed 1, `run` makes exactly one generation, the readable
 * name holds the new bytes, the older bytes and the deleted row's file stay
 * on disk with `current: false` and a reason; `export`, `deliver`, the
 * review listing and the `approve` glob take exactly the current set, and
 * naming a superseded file is refused (exit 2) with the current file's name.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ManifestRow } from '../../src/outputs/index.js';
import type { ReviewListing } from '../../src/review/server/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { manifestRows, spawnCli, testEmulator } from '../helpers/index.js';
import { startTestS3 } from '../helpers/s3-server.js';
import { charges, envFor, type Workspace, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

const JOB = `version: 1
name: products
output: out
generations:
  - id: hero
    model: sdxl-lite
    rows: products.csv
    key: sku
    filename: "{step}/{sku}-{n}.{ext}"
    input:
      prompt: "{{ tagline }}, product shot of {{ sku }}"
`;

const SKUS = Array.from({ length: 30 }, (_, i) => `A${String(i + 1).padStart(3, '0')}`);

function writeRows(ws: Workspace, rows: ReadonlyArray<readonly [string, string]>): void {
  const text = ['sku,tagline', ...rows.map(([sku, tagline]) => `${sku},${tagline}`)].join('\n');
  writeFileSync(path.join(ws.dir, 'products.csv'), `${text}\n`);
}

async function cli(ws: Workspace, env: NodeJS.ProcessEnv, ...args: string[]) {
  const run = spawnCli(args, { cwd: ws.dir, env: { ...env, AWS_REGION: 'us-east-1' } });
  const exit = await run.exited;
  return { code: exit.code ?? -1, stdout: exit.stdout, stderr: exit.stderr };
}

const sha = (file: string) => sha256Hex(readFileSync(file));

/** Files under `dir`, relative, POSIX, sorted. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      return entry.isDirectory() ? filesUnder(dir, relative) : [relative];
    })
    .sort();
}

describe('current outputs follow the job file', () => {
  it('a changed row is remade under its readable name; a deleted one is retired; hand-offs take only current files', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const env = { ...envFor(em, SCALE), ...s3.env };
    const ws = workspace(JOB);
    const out = path.join(ws.dir, 'out');
    const rows = SKUS.map((sku) => [sku, `tagline of ${sku}`] as const);
    writeRows(ws, rows);

    const first = await cli(ws, env, 'run', 'job.yaml', '--deliver', 's3://media/shop');
    expect(first.code, first.stderr).toBe(0);
    expect(await charges(em)).toHaveLength(30);
    const readable = (sku: string) => `hero/${sku}-1.png`;
    const oldA005 = sha(path.join(out, readable('A005')));

    // One row's text changed, another row deleted.
    writeRows(
      ws,
      rows
        .filter(([sku]) => sku !== 'A030')
        .map(([sku, tagline]) => [sku, sku === 'A005' ? 'new spring tagline' : tagline] as const),
    );
    const plan = await cli(ws, env, 'plan', 'job.yaml', '--json');
    expect(plan.code, plan.stderr).toBe(0);
    const step = (JSON.parse(plan.stdout) as { steps: Record<string, unknown>[] }).steps[0];
    expect(step).toMatchObject({ id: 'hero', new: 0, changed: 1, removed: 1, done: 28 });

    const pending = await cli(ws, env, 'status', 'job.yaml');
    expect(pending.stdout).toContain(
      'hero: 1 item(s) changed in the job file, made again by the next run',
    );
    expect(pending.stdout).toContain('hero: 1 item(s) no longer in the job file');

    const second = await cli(ws, env, 'run', 'job.yaml');
    expect(second.code, second.stderr).toBe(0);
    expect(await charges(em)).toHaveLength(31);

    const manifest = manifestRows<ManifestRow>(path.join(out, 'manifest.jsonl'));
    const current = manifest.filter((r) => r.current === true && r.file);
    const notCurrent = manifest.filter((r) => r.current === false);
    // The readable name holds the new bytes.
    const newA005 = manifest.find((r) => r.file === readable('A005'));
    expect(newA005?.current).toBe(true);
    expect(newA005?.sha256).not.toBe(oldA005);
    expect(sha(path.join(out, readable('A005')))).toBe(newA005?.sha256);
    // The old bytes are on disk under another name, not current, with why.
    const oldRow = manifest.find((r) => r.sha256 === oldA005);
    expect(oldRow?.file).toMatch(/^hero\/A005-1-[0-9a-f]{8}\.png$/);
    expect(sha(path.join(out, oldRow?.file ?? ''))).toBe(oldA005);
    expect(existsSync(path.join(out, `${oldRow?.file}.json`))).toBe(true);
    expect(oldRow).toMatchObject({
      current: false,
      currentReason: `superseded by ${newA005?.runId}`,
    });
    // The deleted row's file stays, retired.
    const a030 = manifest.find((r) => r.file === readable('A030'));
    expect(a030).toMatchObject({ current: false, currentReason: 'removed from the job' });
    expect(existsSync(path.join(out, readable('A030')))).toBe(true);
    expect(notCurrent).toHaveLength(2);
    const wanted = SKUS.filter((sku) => sku !== 'A030').map(readable);
    expect(current.map((r) => r.file).sort()).toEqual(wanted);

    // status counts them apart; nothing is left changed.
    const status = await cli(ws, env, 'status', 'job.yaml');
    expect(status.stdout).not.toContain('changed in the job file');
    expect(status.stdout).toContain(
      'review hero: 0 approved, 0 rejected, 29 unreviewed; not current: 1 superseded, 1 removed from the job',
    );

    // export: exactly the current set, under readable names, the new bytes.
    const exported = await cli(ws, env, 'export', 'job.yaml', 'hand-off');
    expect(exported.code, exported.stderr).toBe(0);
    const handOff = path.join(ws.dir, 'hand-off');
    expect(filesUnder(handOff).filter((f) => f.endsWith('.png'))).toEqual(wanted);
    expect(sha(path.join(handOff, readable('A005')))).toBe(newA005?.sha256);

    // deliver: the bucket's readable key now holds the new bytes; no stale object is added.
    const delivered = await cli(ws, env, 'deliver', 'job.yaml', '--to', 's3://media/shop');
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(sha256Hex((await s3.get(`shop/${readable('A005')}`)).body)).toBe(newA005?.sha256);
    const pngKeys = [...new Set(s3.completedPuts().filter((k) => k.endsWith('.png')))].sort();
    // The first run delivered A030 while it was current; nothing not current since.
    expect(pngKeys).toEqual([...wanted.map((f) => `shop/${f}`), `shop/${readable('A030')}`].sort());
    const bucketManifest = (await s3.get('shop/manifest.jsonl')).body
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as ManifestRow);
    expect(bucketManifest.map((r) => r.file).sort()).toEqual(wanted);

    // The review listing shows no stale card.
    const review = await cli(ws, env, 'review', 'job.yaml', '--json');
    expect(review.code, review.stderr).toBe(0);
    const listing = JSON.parse(review.stdout) as ReviewListing;
    expect(listing.outputs.map((o) => o.file).sort()).toEqual(wanted);

    // approve's glob records only current files; a superseded or retired file named is refused.
    const approved = await cli(ws, env, 'approve', 'job.yaml', 'hero/*');
    expect(approved.code, approved.stderr).toBe(0);
    const lines = approved.stdout.split('\n').filter((line) => line.startsWith('approved '));
    expect(lines.map((line) => line.split(' ')[1]).sort()).toEqual(wanted);
    const stale = await cli(ws, env, 'reject', 'job.yaml', oldRow?.file ?? '');
    expect(stale.code).toBe(2);
    expect(stale.stderr).toContain(`the current file is ${readable('A005')}`);
    const retired = await cli(ws, env, 'approve', 'job.yaml', readable('A030'));
    expect(retired.code).toBe(2);
    expect(retired.stderr).toContain('removed from the job');
    const after = await cli(ws, env, 'status', 'job.yaml');
    expect(after.stdout).toContain('review hero: 29 approved, 0 rejected, 0 unreviewed');

    // Without the job file (a run id alone) the manifest's retired rows stay retired.
    const report = await cli(ws, env, 'report', newA005?.runId ?? '');
    expect(report.code, report.stderr).toBe(0);
    const rebuilt = manifestRows<ManifestRow>(path.join(out, 'manifest.jsonl'));
    expect(rebuilt.find((r) => r.file === readable('A030'))).toMatchObject({
      current: false,
      currentReason: 'removed from the job',
    });
    const byRun = await cli(ws, env, 'status', newA005?.runId ?? '');
    expect(byRun.stdout).toContain('not current: 1 superseded, 1 removed from the job');
  }, 180_000);

  it('without key: a changed row is a new item; the retired one gives up the readable name', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(JOB.replace('    key: sku\n', ''));
    const out = path.join(ws.dir, 'out');
    writeRows(ws, [
      ['B001', 'first'],
      ['B002', 'second'],
    ]);
    const first = await cli(ws, envFor(em, SCALE), 'run', 'job.yaml');
    expect(first.code, first.stderr).toBe(0);
    const oldB002 = sha(path.join(out, 'hero/B002-1.png'));
    writeRows(ws, [
      ['B001', 'first'],
      ['B002', 'second edited'],
    ]);
    const plan = await cli(ws, envFor(em, SCALE), 'plan', 'job.yaml', '--json');
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const step = (JSON.parse(plan.stdout) as { steps: Record<string, unknown>[] }).steps[0];
    expect(step).toMatchObject({ new: 1, changed: 0, removed: 1 });
    const second = await cli(ws, envFor(em, SCALE), 'run', 'job.yaml');
    expect(second.code, second.stderr).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    const manifest = manifestRows<ManifestRow>(path.join(out, 'manifest.jsonl'));
    const current = manifest.find((r) => r.file === 'hero/B002-1.png');
    expect(current?.current).toBe(true);
    expect(sha(path.join(out, 'hero/B002-1.png'))).toBe(current?.sha256);
    const retired = manifest.find((r) => r.sha256 === oldB002);
    expect(retired).toMatchObject({ current: false, currentReason: 'removed from the job' });
    expect(retired?.file).toMatch(/^hero\/B002-1-[0-9a-f]{8}\.png$/);
    expect(sha(path.join(out, retired?.file ?? ''))).toBe(oldB002);
  }, 120_000);
});
