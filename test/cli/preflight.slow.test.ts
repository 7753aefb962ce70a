/**
 * End to end: what a job names on the service is checked before
 * anything is spent (unknown or unready influencers, a taken username, a
 * media URL of another service), and changing `output:` between a stop and
 * the resume never splits a run's files. Real `ibatch` (runCli) against real
 * emulators over loopback HTTP; the emulator's ledger is the judge.
 */
import { existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { runCliCaptured, said, testEmulator } from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  workspace,
} from '../scheduler/helpers.js';
import { makePng } from '../uploads/fixtures/media-samples.js';

const SCALE = 30;

async function api(em: RunningEmulator, method: string, route: string, body?: unknown) {
  const res = await fetch(`${em.baseUrl}${route}`, {
    method,
    headers: {
      Authorization: `Bearer ${em.accounts[0]!.apiKey}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `test-${route}-${JSON.stringify(body ?? '')}`.slice(0, 200),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** Uploads a PNG through the presign flow; its permanent asset URL. */
async function uploadPng(em: RunningEmulator): Promise<string> {
  const png = makePng(32, 32, [200, 100, 50]);
  const presign = await api(em, 'POST', '/assets/presign', {
    mimeType: 'image/png',
    sizeBytes: png.length,
  });
  const put = await fetch(String(presign.uploadUrl), {
    method: 'PUT',
    headers: presign.headers as Record<string, string>,
    body: png,
  });
  expect(put.status).toBe(200);
  return String(presign.assetUrl);
}

/** Starts a training of an influencer with this username (charged once). */
async function trainInfluencer(em: RunningEmulator, username: string): Promise<void> {
  const assetUrl = await uploadPng(em);
  await api(em, 'POST', '/training/jobs', {
    name: 'Ava Rose',
    username,
    style: 'realistic',
    gender: 'female',
    assetUrls: [assetUrl],
    consentAcknowledged: true,
  });
}

/** Two steps: cheap drafts (spent first when nothing is checked), then `second`. */
function twoStepJob(second: string[], head: string[] = []): string {
  return [
    'version: 1',
    'name: preflight-job',
    'output: out',
    ...head,
    'generations:',
    '  - id: drafts',
    '    model: sdxl-lite',
    '    matrix:',
    '      scene: [s1, s2, s3]',
    '    input:',
    '      prompt: "a quiet street {{ scene }}"',
    ...second,
    '',
  ].join('\n');
}

const portraitOf = (influencer: string) => [
  '  - id: portraits',
  '    model: flux-portrait',
  `    influencer: ${influencer}`,
  '    input:',
  '      prompt: "a portrait"',
];

describe('checked before spending', () => {
  it('an unknown username: validate, plan and run exit 2 at the field, suggest the close name, spend nothing', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    await trainInfluencer(em, 'ava_rose');
    const before = (await charges(em)).length;
    const ws = workspace(twoStepJob(portraitOf('ava_rosa')));
    const env = envFor(em, SCALE);
    for (const command of ['validate', 'plan', 'run']) {
      const result = await runCliCaptured([command, 'job.yaml'], env, ws.dir);
      expect(result.code, `${command}: ${said(result)}`).toBe(2);
      expect(result.stderr).toMatch(
        /job\.yaml:13:17 {2}generations\[1\]\.influencer {2}influencer `ava_rosa` is not on this account \(did you mean `ava_rose`\?\)/,
      );
    }
    expect(await charges(em)).toHaveLength(before);
    expect(existsSync(path.join(ws.dir, 'out', 'manifest.jsonl'))).toBe(false);
  });

  it('an influencer still training: run exits 2 with its status, nothing spent', async () => {
    const em = await testEmulator({ timeScale: SCALE, trainingMs: { lora: 3_600_000 } });
    await trainInfluencer(em, 'ava_rose');
    const before = (await charges(em)).length;
    const ws = workspace(twoStepJob(portraitOf('Ava_Rose')));
    const result = await runCliCaptured(['run', 'job.yaml'], envFor(em, SCALE), ws.dir);
    expect(result.code, said(result)).toBe(2);
    expect(result.stderr).toMatch(/influencer `Ava_Rose` is not ready \(status \w+\)/);
    expect(await charges(em)).toHaveLength(before);
  });

  it('a job-local username the account already uses: exit 2 with the reuse hint, nothing spent', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    await trainInfluencer(em, 'ava_rose');
    const before = await charges(em);
    const images = await uploadPng(em);
    const ws = workspace(
      twoStepJob(portraitOf('mia'), [
        'influencers:',
        '  mia:',
        '    name: Mia',
        '    username: ava_rose',
        '    style: realistic',
        '    gender: female',
        `    images: ["${images}"]`,
        '    consentAcknowledged: true',
      ]),
    );
    const result = await runCliCaptured(['run', 'job.yaml'], envFor(em, SCALE), ws.dir);
    expect(result.code, said(result)).toBe(2);
    expect(result.stderr).toMatch(
      /job\.yaml:7:15 {2}influencers\.mia\.username {2}username `ava_rose` is already taken by this account's influencer [0-9a-f-]+ .*write `influencer: ava_rose`/,
    );
    expect(await charges(em)).toHaveLength(before.length);
  });

  it("another service's asset URL: validate and run exit 2 at the field, nothing spent; an own asset URL passes", async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const other = await testEmulator({ timeScale: SCALE });
    const foreign = await uploadPng(other);
    const edit = (url: string) => [
      '  - id: edits',
      '    model: nano-edit',
      '    input:',
      '      prompt: "make it blue"',
      `      image: "${url}"`,
    ];
    const ws = workspace(twoStepJob(edit(foreign)));
    const env = envFor(em, SCALE);
    for (const command of ['validate', 'run']) {
      const result = await runCliCaptured([command, 'job.yaml'], env, ws.dir);
      expect(result.code, `${command}: ${said(result)}`).toBe(2);
      expect(result.stderr).toMatch(
        /job\.yaml:15:14 {2}generations\[1\]\.input\.image {2}item .*is not an asset of this service/,
      );
    }
    expect(await charges(em)).toHaveLength(0);

    ws.write(twoStepJob(edit(await uploadPng(em))));
    const own = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
    expect(own.code, said(own)).toBe(0);
    expect(await charges(em)).toHaveLength(4);
  });
});

/**
 * A 6-item job stopped by `--max-spend` with part of it paid; `move` runs
 * between the stop and the resume, which happens with `output: out2`.
 */
async function stopThenResumeInOut2(name: string, move: (dir: string) => void = () => undefined) {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace(imageJob({ name, n: 6 }));
  const env = envFor(em, SCALE);
  const first = await runCliCaptured(['run', 'job.yaml', '--max-spend', '6'], env, ws.dir);
  expect(first.code, said(first)).toBe(3);
  const paid = (await charges(em)).length;
  expect(paid).toBeGreaterThan(0);
  expect(paid).toBeLessThan(6);
  move(ws.dir);
  ws.write(imageJob({ name, n: 6 }).replace('output: out', 'output: out2'));
  const resumed = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
  expect(resumed.code, said(resumed)).toBe(0);
  expectOneChargePerItem(await charges(em), 6);
  return { ws, env, resumed };
}

/** The folder holds all 6 rows and every file its manifest names. */
function expectWholeRunIn(folder: string): void {
  const rows = readManifest(folder);
  expect(rows.filter((r) => r.status === 'succeeded')).toHaveLength(6);
  for (const row of rows) expect(existsSync(path.join(folder, row.file ?? '?'))).toBe(true);
}

describe('output: changed between a stop and the resume', () => {
  it("the resumed run finishes in its folder: no run's files split, none lost, none paid twice", async () => {
    const { ws, resumed } = await stopThenResumeInOut2('moved-output');
    expectWholeRunIn(path.join(ws.dir, 'out'));
    // Nothing of that run went to the new folder.
    expect(existsSync(path.join(ws.dir, 'out2', 'manifest.jsonl'))).toBe(false);
    expect(said(resumed)).toMatch(/writes its files to .*out, where it started/);
  }, 60_000);

  it('a folder the user moved to the new place: the resumed run follows it there', async () => {
    const { ws, env } = await stopThenResumeInOut2('moved-folder', (dir) =>
      renameSync(path.join(dir, 'out'), path.join(dir, 'out2')),
    );
    expectWholeRunIn(path.join(ws.dir, 'out2'));
    expect(existsSync(path.join(ws.dir, 'out'))).toBe(false);
    const status = await runCliCaptured(['status', 'job.yaml', '--json'], env, ws.dir);
    expect(status.stdout).toContain(path.join(ws.dir, 'out2'));
  }, 60_000);
});
