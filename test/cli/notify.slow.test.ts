/**
 * `run --notify URL` and the job's `notify:`: real `ibatch run`
 * invocations against the emulator over loopback, each announcing its end to
 * a real HTTP receiver (test/helpers/receiver.ts). Spawned processes (the
 * hanging receiver, SIGINT) need `npm run build`.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { NOTIFY_TOTAL_MS } from '../../src/notify/index.js';
import { RESUME_AFTER_INTERRUPT } from '../../src/scheduler/index.js';
import { REDACTED } from '../../src/shared/index.js';
import { VERSION } from '../../src/version.js';
import type { SeenRequest as Received } from '../api/helpers/local-server.js';
import {
  defer,
  type Receiver,
  runCliCaptured,
  type SpawnedCli,
  said,
  spawnCli,
  testEmulator,
  testReceiver,
  until,
} from '../helpers/index.js';
import { startRedis } from '../helpers/redis-server.js';
import { startTestS3 } from '../helpers/s3-server.js';
import {
  charges,
  envFor,
  heldEnv,
  imageJob,
  ledgerNet,
  statusOf,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const SECRET = 'a-receiver-secret';

/** The job with `notify:` entries (YAML flow values) appended. */
function withNotify(yaml: string, entries: readonly string[]): string {
  return `${yaml}notify:\n${entries.map((e) => `  - ${e}`).join('\n')}\n`;
}

function eventOf(request: Received | undefined): Record<string, unknown> {
  expect(request, 'a POST').toBeDefined();
  return JSON.parse(request?.body ?? '') as Record<string, unknown>;
}

/** How a receiver checks `X-Ibatch-Signature` (docs/notify.md): HMAC of the raw body, constant-time compare. */
function signedBy(request: Received, secret: string): boolean {
  const header = String(request.headers['x-ibatch-signature'] ?? '');
  const expected = `sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`;
  return (
    header.length === expected.length && timingSafeEqual(Buffer.from(header), Buffer.from(expected))
  );
}

/** The one message a stopped run sent, checked against what its stop should say. */
function theStop(
  receiver: Receiver,
  job: string,
  stop: { readonly exit: number; readonly status: string; readonly stopReason: string },
): Record<string, unknown> {
  expect(receiver.received).toHaveLength(1);
  const event = eventOf(receiver.received[0]);
  expect(event).toMatchObject({
    event: 'run.stopped',
    job,
    status: stop.status,
    exitCode: stop.exit,
    stopReason: stop.stopReason,
    resume: 'ibatch run job.yaml',
  });
  expect(String(event.message)).not.toBe('');
  return event;
}

const ZERO_COUNTS = { succeeded: 0, failed: 0, blocked: 0, skipped: 0, pending: 0 };

describe('run --notify', () => {
  it('a finished run POSTs run.finished, signed, to the job’s and the flag’s URLs; a run with nothing to do still reports', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const receiver = await testReceiver();
    const ws = workspace(withNotify(imageJob({ name: 'nightly', n: 3 }), [receiver.url('/job')]));
    const env: NodeJS.ProcessEnv = { ...envFor(e, SCALE), IBATCH_NOTIFY_SECRET: SECRET };
    const key = String(env.IBATCH_API_KEY);
    // An output folder named with the key: the payload's paths must not carry it.
    const args = ['run', 'job.yaml', '--out', `out-${key}`, '--notify', receiver.url('/flag')];
    const first = await runCliCaptured(args, env, ws.dir);
    expect(first.code, first.stderr).toBe(0);

    expect(receiver.to('/job')).toHaveLength(1);
    expect(receiver.to('/flag')).toHaveLength(1);
    const [request] = receiver.to('/job');
    const event = eventOf(request);
    const outputDir = path.join(ws.dir, `out-${REDACTED}`);
    expect(event).toMatchObject({
      event: 'run.finished',
      job: 'nightly',
      jobFile: 'job.yaml',
      status: 'completed',
      exitCode: 0,
      stopReason: null,
      counts: { ...ZERO_COUNTS, succeeded: 3 },
      credits: { charged: 6, refunded: 0, net: 6 },
      outputDir,
      report: path.join(outputDir, 'report.html'),
      resume: null,
      ibatch: { version: VERSION },
    });
    expect((event.credits as { net: number }).net).toBe(await ledgerNet(e));
    expect(first.stdout.split('\n')).toContain(`run ${String(event.runId)}`);
    expect(Date.parse(String(event.endedAt))).toBeGreaterThanOrEqual(
      Date.parse(String(event.startedAt)),
    );

    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toBe(`influencer-batch/${VERSION}`);
    expect(request?.headers['x-ibatch-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    for (const r of receiver.received) {
      expect(signedBy(r, SECRET)).toBe(true);
      expect(signedBy(r, 'another-secret')).toBe(false);
      expect(`${r.body} ${JSON.stringify(r.headers)}`).not.toContain(key);
    }
    expect(receiver.to('/flag')[0]?.body).toBe(request?.body);

    // The nightly cron's next run: nothing new, still one message, about the same run.
    const again = await runCliCaptured(args, env, ws.dir);
    expect(again.code, again.stderr).toBe(0);
    expect(receiver.to('/job')).toHaveLength(2);
    expect(eventOf(receiver.to('/job')[1])).toMatchObject({
      event: 'run.finished',
      runId: event.runId,
      exitCode: 0,
      counts: ZERO_COUNTS,
      done: 3,
      credits: { charged: 0, refunded: 0, net: 0 },
    });
  }, 60_000);

  it('retries after a 500 (one delivery id), and a Slack-format URL gets a Slack message', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const flaky = await testReceiver((n) => (n === 0 ? 500 : 200));
    const slack = await testReceiver();
    const ws = workspace(
      withNotify(imageJob({ name: 'slack-job', n: 3 }), [
        flaky.url(),
        `{ url: "${slack.url('/services/T0/B0/x')}", format: slack }`,
      ]),
    );
    const result = await runCliCaptured(['run', 'job.yaml'], envFor(e, SCALE), ws.dir);
    expect(result.code, result.stderr).toBe(0);

    expect(flaky.received).toHaveLength(2);
    const [a, b] = flaky.received;
    expect(a?.headers['x-ibatch-delivery']).toBe(b?.headers['x-ibatch-delivery']);
    expect(a?.body).toBe(b?.body);
    expect(eventOf(b).event).toBe('run.finished');
    expect(a?.headers['x-ibatch-signature']).toBeUndefined(); // no secret set

    expect(slack.received).toHaveLength(1);
    const message = eventOf(slack.received[0]);
    expect(message.event).toBeUndefined();
    expect(message.text).toEqual(expect.stringContaining('*slack-job* finished'));
    expect(message.text).toEqual(expect.stringContaining('3 succeeded, 0 failed'));
    expect(message.text).toEqual(expect.stringContaining('6 credits net (6 charged, 0 refunded)'));
    expect(message.blocks).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'section' })]),
    );
  }, 60_000);

  it('a receiver that never answers delays the exit by at most the documented bound, exit code unchanged', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const hanging = await testReceiver(() => 'hang');
    const ws = workspace(withNotify(imageJob({ name: 'hang-job', n: 1 }), [hanging.url()]));
    const run = spawnCli(['run', 'job.yaml'], { env: envFor(e, SCALE), cwd: ws.dir });
    const exit = await run.exited;
    const exitedAt = Date.now();
    expect(exit.code, exit.stderr).toBe(0);
    const firstPost = hanging.received[0];
    expect(firstPost, 'the run announced its end').toBeDefined();
    // From the end of the run (its first POST) to the process's exit.
    expect(exitedAt - (firstPost?.at ?? 0)).toBeLessThan(NOTIFY_TOTAL_MS + 1_500);
    const warnings = exit.stderr.split('\n').filter((line) => line.includes('not delivered'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(new URL(hanging.url()).origin);
  }, 60_000);
});

interface StopCase {
  readonly budget?: number;
  readonly env?: (e: RunningEmulator) => Promise<NodeJS.ProcessEnv>;
  readonly before?: (e: RunningEmulator) => Promise<unknown>;
  readonly exit: number;
  readonly status: string;
  readonly stopReason: string;
  /** Whether a run existed when it stopped. */
  readonly hasRun: boolean;
}

const STOPS: readonly [string, StopCase][] = [
  [
    'the budget reached (exit 3)',
    { budget: 7, exit: 3, status: 'stopped_credits', stopReason: 'credits', hasRun: true },
  ],
  [
    'the key refused before any run (exit 5)',
    {
      before: (e) => e.admin.revokeKey(e.accounts[0]!.apiKey),
      exit: 5,
      status: 'stopped_unauthorized',
      stopReason: 'unauthorized',
      hasRun: false,
    },
  ],
  [
    'the service unreachable before any run (exit 4)',
    {
      // An emulator that stopped: its port refuses connections.
      env: async (e) => {
        const gone = await testEmulator();
        await gone.stop();
        return { ...envFor(e, SCALE), IBATCH_BASE_URL: gone.baseUrl };
      },
      exit: 4,
      status: 'stopped_unreachable',
      stopReason: 'unreachable',
      hasRun: false,
    },
  ],
];

interface MidRunStop {
  /** Once the run has charged something. */
  readonly during: (e: RunningEmulator, run: SpawnedCli) => Promise<unknown>;
  readonly exit: number;
  readonly status: string;
  readonly stopReason: string;
  /** Words the event's message must carry. */
  readonly says?: string;
}

const MID_RUN_STOPS: readonly [string, MidRunStop][] = [
  [
    'the key revoked mid-run (exit 5)',
    {
      during: (e) => e.admin.revokeKey(e.accounts[0]!.apiKey),
      exit: 5,
      status: 'stopped_unauthorized',
      stopReason: 'unauthorized',
    },
  ],
  [
    'the service gone mid-run (exit 4)',
    {
      // The emulator stops: every request after it fails to connect, retries run out.
      during: (e) => e.stop(),
      exit: 4,
      status: 'stopped_unreachable',
      stopReason: 'unreachable',
    },
  ],
  [
    'SIGINT mid-run (exit 130)',
    {
      during: async (_e, run) => run.child.kill('SIGINT'),
      exit: 130,
      status: 'interrupted',
      stopReason: 'interrupted',
      says: RESUME_AFTER_INTERRUPT,
    },
  ],
];

describe('run --notify: each way a run stops', () => {
  it.each(STOPS)(
    '%s: run.stopped with its reason and the resume command',
    async (_what, c) => {
      const e = await testEmulator({ timeScale: SCALE });
      const receiver = await testReceiver();
      const job = imageJob({ name: 'stop-job', n: 20, ...(c.budget ? { budget: c.budget } : {}) });
      const ws = workspace(withNotify(job, [receiver.url()]));
      await c.before?.(e);
      const env = c.env ? await c.env(e) : envFor(e, SCALE);
      const result = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(result.code, result.stderr).toBe(c.exit);
      const event = theStop(receiver, 'stop-job', c);
      if (c.hasRun) expect(event.runId).toEqual(expect.any(String));
      else expect(event).toMatchObject({ runId: null, counts: ZERO_COUNTS });
    },
    60_000,
  );

  it.each(MID_RUN_STOPS)(
    '%s: run.stopped with the run, what it did, its reason and the resume command',
    async (_what, c) => {
      const e = await testEmulator({ timeScale: SCALE });
      const receiver = await testReceiver();
      const ws = workspace(withNotify(imageJob({ name: 'mid-job', n: 20 }), [receiver.url()]));
      const run = spawnCli(['run', 'job.yaml'], { env: heldEnv(e, SCALE), cwd: ws.dir });
      await until(async () => (await charges(e)).length >= 1, {
        timeoutMs: 20_000,
        what: 'a first charge',
      });
      await c.during(e, run);
      const exit = await run.exited;
      expect(exit.code, exit.stderr).toBe(c.exit);
      const event = theStop(receiver, 'mid-job', c);
      expect(event.runId).toEqual(expect.any(String));
      // The status the journal keeps is the one announced.
      expect(await statusOf(ws)).toMatchObject({ status: c.status, finished: false });
      expect((event.credits as { charged: number }).charged).toBeGreaterThan(0);
      expect((event.counts as { pending: number }).pending).toBeGreaterThan(0);
      if (c.says) expect(String(event.message)).toContain(c.says);
    },
    60_000,
  );

  it('a limits store with a password: the resume names its host and port, no receiver ever sees the password', async () => {
    const password = `pw-${randomUUID()}`;
    const redis = await startRedis({ password });
    defer(() => redis.kill());
    expect(redis.url).toBe(`redis://:${password}@127.0.0.1:${redis.port}`);
    const e = await testEmulator({ timeScale: SCALE });
    const hook = await testReceiver();
    const slack = await testReceiver();
    const ws = workspace(
      withNotify(imageJob({ name: 'store-job', n: 20, budget: 7 }), [
        hook.url(),
        `{ url: "${slack.url('/services/T0/B0/x')}", format: slack }`,
      ]),
    );
    const args = ['run', 'job.yaml', '--limits-store', redis.url, '--share', '2'];
    const result = await runCliCaptured(args, envFor(e, SCALE), ws.dir);
    expect(result.code, result.stderr).toBe(3);

    const resume = `ibatch run job.yaml --limits-store redis://127.0.0.1:${redis.port} --share 2`;
    expect(eventOf(hook.received[0])).toMatchObject({ event: 'run.stopped', resume });
    expect(String(eventOf(slack.received[0]).text)).toContain(resume);
    for (const r of [...hook.received, ...slack.received])
      expect(`${r.url} ${r.body} ${JSON.stringify(r.headers)}`).not.toContain(password);
    expect(`${result.stdout}${result.stderr}`).not.toContain(password);

    // The run did share its limits through the store, password and all: it ran the gate's scripts.
    const client = new Redis(redis.url);
    defer(() => client.disconnect());
    const stats = await client.info('commandstats');
    expect(stats).toMatch(/cmdstat_eval(sha)?:calls=[1-9]/);
  }, 60_000);

  it('an invalid job file (exit 2) sends nothing and spends nothing; a bad URL is named at file:line', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const receiver = await testReceiver();
    const ws = workspace(
      withNotify(`${imageJob({ name: 'bad-job', n: 2 })}budget: -1\n`, [receiver.url()]),
    );
    const invalid = await runCliCaptured(['run', 'job.yaml'], envFor(e, SCALE), ws.dir);
    expect(invalid.code, invalid.stderr).toBe(2);

    ws.write(withNotify(imageJob({ name: 'bad-job', n: 2 }), ['ftp://example.com/hook']));
    const badUrl = await runCliCaptured(['run', 'job.yaml'], envFor(e, SCALE), ws.dir);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/job\.yaml:\d+:\d+\s+notify\[0\]\s+must be an http or https URL/);

    const badFlag = await runCliCaptured(
      ['run', 'job.yaml', '--notify', 'not a url'],
      envFor(e, SCALE),
      ws.dir,
    );
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--notify');

    expect(receiver.received).toHaveLength(0);
    expect(await charges(e)).toHaveLength(0);
  }, 60_000);

  it('a delivery the store refuses after the run: run.stopped, reason delivery, exit 4, the run completed; then run.finished with the delivery', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const s3 = await startTestS3();
    const receiver = await testReceiver();
    const job = imageJob({ name: 'deliver-job', n: 2 }).replace(
      'output: out',
      'output: out\ndeliver: s3://media/n',
    );
    const ws = workspace(withNotify(job, [receiver.url()]));
    const env = { ...envFor(e, SCALE), ...s3.env, AWS_REGION: 'us-east-1' };
    const refused = await spawnCli(['run', 'job.yaml'], {
      cwd: ws.dir,
      env: { ...env, AWS_ACCESS_KEY_ID: 'NOBODY' },
    }).exited;
    expect(refused.code, said(refused)).toBe(4);
    expect(receiver.received).toHaveLength(1);
    const stopped = eventOf(receiver.received[0]);
    expect(stopped).toMatchObject({
      event: 'run.stopped',
      status: 'completed',
      exitCode: 4,
      stopReason: 'delivery',
      runId: expect.any(String),
      counts: { ...ZERO_COUNTS, succeeded: 2 },
      resume: 'ibatch run job.yaml',
      delivery: {
        destination: 's3://media/n',
        objects: 6,
        sent: 0,
        unchanged: 0,
        error: {
          code: 'delivery_refused',
          message: expect.stringContaining('refused the delivery'),
        },
      },
    });
    expect(String(stopped.message)).toContain('refused the delivery');

    const delivered = await spawnCli(['run', 'job.yaml'], { cwd: ws.dir, env }).exited;
    expect(delivered.code, said(delivered)).toBe(0);
    expect(receiver.received).toHaveLength(2);
    expect(eventOf(receiver.received[1])).toMatchObject({
      event: 'run.finished',
      runId: stopped.runId,
      exitCode: 0,
      stopReason: null,
      resume: null,
      delivery: { destination: 's3://media/n', outputs: 2, sent: 6, unchanged: 0 },
    });
  }, 60_000);
});
