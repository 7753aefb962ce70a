/**
 * `connect().run` alone (no CLI) does what `ibatch run` does after a run: a
 * job with `deliver:` and `notify:` delivers its outputs to a real
 * S3-compatible server (test/helpers/s3-server.ts) and announces its end to a
 * real HTTP receiver, and the call returns `{ result, delivery, notification }`.
 * The emulator's ledger is the judge of what was charged.
 */
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { connect } from '../../src/library/index.js';
import type { ManifestRow } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { defer, emulatorEnv, manifestRows, scaledLimits, testReceiver } from '../helpers/index.js';
import { startTestS3 } from '../helpers/s3-server.js';
import {
  charges,
  connectedEmulator,
  imageJob,
  ledgerNet,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const SECRET = 'a-library-receiver-secret';

/** The job with `deliver:` and `notify:` written in it. */
function handOffJob(name: string, deliverTo: string, notifyUrl: string): string {
  return `${imageJob({ name, n: 3 })}deliver: ${deliverTo}\nnotify:\n  - ${notifyUrl}\n`;
}

/**
 * The AWS SDK reads its credentials from the process environment (its default
 * chain): the test server's, for this test only.
 */
function s3Credentials(env: Readonly<Record<string, string>>): void {
  vi.stubEnv('AWS_ACCESS_KEY_ID', env.AWS_ACCESS_KEY_ID ?? '');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', env.AWS_SECRET_ACCESS_KEY ?? '');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  defer(() => vi.unstubAllEnvs());
}

describe('connect().run: deliver: and notify: without the CLI', () => {
  it('a finished run delivers its outputs to the store and announces its end, and returns all three', async () => {
    const { em, connection } = await connectedEmulator(SCALE);
    const s3 = await startTestS3('media');
    s3Credentials(s3.env);
    const receiver = await testReceiver();
    const ws = workspace(handOffJob('lib-hand-off', 's3://media/spring', receiver.url('/job')));

    const outcome = await connection.run(ws.jobPath, {
      notify: [receiver.url('/option')],
      env: { ...s3.env, IBATCH_NOTIFY_SECRET: SECRET },
    });

    // The run: three items made, each charged once, as the ledger shows.
    const { result } = outcome;
    expect(result.exitCode, result.message).toBe(0);
    expect(outcome.exitCode).toBe(0);
    expect(result.counts.succeeded).toBe(3);
    expect(await charges(em)).toHaveLength(3);
    expect(result.spend.net).toBe(await ledgerNet(em));

    // The delivery: every current file, its provenance sidecar and both manifests.
    const rows = manifestRows<ManifestRow>(path.join(ws.dir, 'out', 'manifest.jsonl')).filter(
      (row) => row.current && row.file,
    );
    expect(rows).toHaveLength(3);
    const keys = [
      ...rows.flatMap((row) => [`spring/${row.file}`, `spring/${row.file}.json`]),
      'spring/manifest.csv',
      'spring/manifest.jsonl',
    ].sort();
    expect(s3.completedPuts().sort()).toEqual(keys);
    for (const row of rows) {
      const object = await s3.get(`spring/${row.file}`);
      expect(sha256Hex(object.body), row.file).toBe(row.sha256);
    }
    expect(outcome.delivery).toMatchObject({
      destination: 's3://media/spring',
      outputs: 3,
      sent: keys.length,
      unchanged: 0,
    });

    // The notification: the job's receiver and the option's, the same signed payload.
    expect(receiver.to('/job')).toHaveLength(1);
    expect(receiver.to('/option')).toHaveLength(1);
    const [request] = receiver.to('/job');
    const body = request?.body ?? '';
    expect(request?.headers['x-ibatch-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    );
    const payload = JSON.parse(body) as Record<string, unknown>;
    expect(payload).toMatchObject({
      event: 'run.finished',
      job: 'lib-hand-off',
      runId: result.runId,
      status: 'completed',
      exitCode: 0,
      stopReason: null,
      counts: { succeeded: 3, failed: 0, blocked: 0, skipped: 0, pending: 0 },
      credits: { charged: 6, refunded: 0, net: 6 },
      delivery: { destination: 's3://media/spring', outputs: 3, sent: keys.length, unchanged: 0 },
      outputDir: path.join(ws.dir, 'out'),
      resume: null,
    });
    expect(outcome.notification).not.toBeNull();
    expect(JSON.parse(JSON.stringify(outcome.notification?.event))).toEqual(payload);
    expect(outcome.notification?.receivers.map((r) => [r.url, r.delivered]).sort()).toEqual(
      [
        [receiver.url('/job'), true],
        [receiver.url('/option'), true],
      ].sort(),
    );
  }, 60_000);

  it('a delivery the store refuses keeps the run as it ended, exits 4 and says so to the receiver', async () => {
    const { em, connection } = await connectedEmulator(SCALE);
    const s3 = await startTestS3('media');
    s3Credentials(s3.env);
    const receiver = await testReceiver();
    const ws = workspace(handOffJob('lib-hand-off-refused', 's3://media/x', receiver.url('/job')));

    // A bucket the store does not have: the store refuses every object.
    const outcome = await connection.run(ws.jobPath, {
      deliverTo: 's3://no-such-bucket/spring',
      env: s3.env,
    });

    expect(outcome.result.exitCode, outcome.result.message).toBe(0);
    expect(outcome.result.status).toBe('completed');
    expect(await charges(em)).toHaveLength(3);
    expect(outcome.exitCode).toBe(4);
    expect(outcome.delivery).toMatchObject({ error: { code: 'delivery_refused' } });
    expect(s3.completedPuts()).toEqual([]);
    const event = JSON.parse(receiver.to('/job')[0]?.body ?? '{}') as Record<string, unknown>;
    expect(event).toMatchObject({
      event: 'run.stopped',
      runId: outcome.result.runId,
      exitCode: 4,
      stopReason: 'delivery',
      resume: `ibatch run ${ws.jobPath} --deliver s3://no-such-bucket/spring`,
    });
    expect(outcome.notification?.event).toMatchObject({ exitCode: 4, stopReason: 'delivery' });
  }, 60_000);

  it('a run that cannot start (the key refused) rejects, once its end went to the receiver', async () => {
    const { em } = await connectedEmulator(SCALE);
    const receiver = await testReceiver();
    const ws = workspace(handOffJob('lib-hand-off-key', 's3://media/k', receiver.url('/job')));
    const connection = connect({
      baseUrl: emulatorEnv(em).IBATCH_BASE_URL ?? '',
      apiKey: 'sk-not-an-account',
      limits: scaledLimits(SCALE),
    });
    defer(() => connection.close());

    const error = await connection.run(ws.jobPath).catch((e: unknown) => e);

    expect(error).toMatchObject({ exitCode: 5 });
    expect(await charges(em)).toHaveLength(0);
    const event = JSON.parse(receiver.to('/job')[0]?.body ?? '{}') as Record<string, unknown>;
    expect(event).toMatchObject({
      event: 'run.stopped',
      job: 'lib-hand-off-key',
      runId: null,
      exitCode: 5,
    });
  }, 60_000);

  it('plan reads the journal the run was given (journalPath), not the one beside the job', async () => {
    const { connection } = await connectedEmulator(SCALE);
    const ws = workspace(imageJob({ name: 'lib-journal', n: 2 }));
    const journalPath = path.join(ws.dir, 'elsewhere', 'journal.db');

    const { result } = await connection.run(ws.jobPath, { journalPath });
    expect(result.exitCode, result.message).toBe(0);

    const quoted = await connection.plan(ws.jobPath, { journalPath });
    expect([quoted.total, quoted.spent]).toEqual([0, 4]);
    // Beside the job there is no journal: what the run spent is not in it.
    const beside = await connection.plan(ws.jobPath);
    expect([beside.total, beside.spent]).toEqual([0, 0]);
  }, 60_000);
});
