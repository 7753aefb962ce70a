/**
 * The review server over real HTTP on loopback: every
 * route needs the token; decisions only by POST with the token in a header
 * and a JSON body, recorded in the journal at once; GET never changes
 * anything; nothing outside the listed output files is served (`..`,
 * `%2e%2e`, absolute paths, encoded slashes, a symlink planted in the folder).
 */

import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { buildListing, type ReviewedOutput } from '../../src/review/server/index.js';
import { tempDir } from '../helpers/index.js';
import { JOB_NAME, pipelineRun, type RunDone, rawRequest as raw, reviewServer } from './helpers.js';

let run: RunDone;
beforeAll(async () => {
  run = await pipelineRun('review-server');
}, 120_000);

async function listing(base: string, token: string): Promise<ReviewedOutput[]> {
  const res = await fetch(`${base}/api/outputs?limit=500`, {
    headers: { 'X-Ibatch-Token': token },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { outputs: ReviewedOutput[] }).outputs;
}

async function reviewCount(journalPath: string): Promise<number> {
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    return journal.latestReviews(JOB_NAME).length;
  } finally {
    journal.close();
  }
}

const fileUrl = (file: string) => `/files/${file.split('/').map(encodeURIComponent).join('/')}`;

describe('ibatch review server', () => {
  it('answers 401 without the token and 403 with a wrong one, on every route and method', async () => {
    const { base, token } = await reviewServer(run);
    const outputs = await listing(base, token);
    const file = outputs.find((o) => o.file)?.file ?? '';
    const routes = ['/', '/api/outputs', fileUrl(file), '/api/decisions', '/nowhere'];
    for (const route of routes) {
      for (const method of ['GET', 'POST']) {
        const headers = { 'Content-Type': 'application/json' };
        const body = method === 'POST' ? '{}' : undefined;
        const none = await raw(base, route, { method, headers, ...(body ? { body } : {}) });
        expect(none.status, `${method} ${route}`).toBe(401);
        const wrong = await raw(base, `${route}?token=${'x'.repeat(token.length)}`, {
          method,
          headers,
          ...(body ? { body } : {}),
        });
        expect(wrong.status, `${method} ${route}`).toBe(403);
        const wrongHeader = await raw(base, route, {
          method,
          headers: { ...headers, 'X-Ibatch-Token': `${token}x` },
          ...(body ? { body } : {}),
        });
        expect(wrongHeader.status, `${method} ${route}`).toBe(403);
      }
    }
    // With the token: the page, with its safety headers.
    const page = await raw(base, `/?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(page.headers['content-security-policy']).toMatch(/img-src 'self'/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).not.toContain(token);
  });

  it('records a POSTed decision in the journal; GET and unsafe POSTs change nothing', async () => {
    const { base, token, journal } = await reviewServer(run);
    const outputs = await listing(base, token);
    expect(outputs).toHaveLength(4);
    const photo = outputs.find((o) => o.step === 'photos' && o.file);
    if (!photo) throw new Error('no photo');
    const body = JSON.stringify({
      targets: [{ runId: photo.runId, item: photo.item, n: photo.n }],
      decision: 'rejected',
      note: 'too dark',
    });
    const before = await reviewCount(run.journalPath);

    // A GET to the decisions route, the token only in the query, a form's
    // content type, a cross-origin Origin: refused, nothing recorded.
    const attempts = [
      raw(base, `/api/decisions?token=${token}`),
      raw(base, `/api/decisions?token=${token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      }),
      raw(base, '/api/decisions', {
        method: 'POST',
        headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      }),
      raw(base, '/api/decisions', {
        method: 'POST',
        headers: { 'X-Ibatch-Token': token, 'Content-Type': 'text/plain' },
        body,
      }),
      raw(base, '/api/decisions', {
        method: 'POST',
        headers: {
          'X-Ibatch-Token': token,
          'Content-Type': 'application/json',
          Origin: 'http://evil.example',
        },
        body,
      }),
    ];
    const statuses = (await Promise.all(attempts)).map((r) => r.status);
    expect(statuses).toEqual([405, 403, 403, 403, 403]);
    // Every GET route, read twice: nothing recorded.
    await raw(base, `/?token=${token}`);
    await raw(base, `/api/outputs?token=${token}&review=rejected`);
    await raw(base, `${fileUrl(photo.file ?? '')}?token=${token}`);
    expect(await reviewCount(run.journalPath)).toBe(before);

    // A decision on an output the job does not have: refused.
    const made = await raw(base, '/api/decisions', {
      method: 'POST',
      headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ targets: [{ runId: 'r', item: 'x', n: 1 }], decision: 'approved' }),
    });
    expect(made.status).toBe(400);
    // An edited prompt is for a next attempt: an approval cannot carry one.
    const approvedPrompt = await raw(base, '/api/decisions', {
      method: 'POST',
      headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...JSON.parse(body), decision: 'approved', prompt: 'brighter' }),
    });
    expect(approvedPrompt.status).toBe(400);
    expect(approvedPrompt.body).toContain('only a rejection carries an edited prompt');
    expect(await reviewCount(run.journalPath)).toBe(before);

    const ok = await raw(base, '/api/decisions', {
      method: 'POST',
      headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ ...JSON.parse(body), prompt: '  a model on a beach at noon  ' }),
    });
    expect(ok.status, ok.body).toBe(200);
    const answer = JSON.parse(ok.body) as { recorded: number; outputs: ReviewedOutput[] };
    expect(answer.recorded).toBe(1);
    expect(answer.outputs.map((o) => [o.id, o.review, o.note, o.reviewer, o.editedPrompt])).toEqual(
      [[photo.id, 'rejected', 'too dark', 'ana', 'a model on a beach at noon']],
    );
    // In the journal at once (another connection reads it).
    const reader = await openJournal(run.journalPath, { readonly: true });
    const latest = reader.latestReviews(JOB_NAME);
    reader.close();
    expect(latest.at(-1)).toMatchObject({
      runId: photo.runId,
      itemKey: photo.item,
      n: photo.n,
      decision: 'rejected',
      reviewer: 'ana',
      note: 'too dark',
      prompt: 'a model on a beach at noon',
    });
    // The clip made from it says so.
    const after = await listing(base, token);
    expect(after.find((o) => o.id === photo.id)?.dependants).toEqual(
      after.filter((o) => o.sourceFile === photo.file).map((o) => o.file),
    );
    expect(after.find((o) => o.id === photo.id)?.dependants).toHaveLength(1);
    // The rejected filter finds it.
    const rejected = await fetch(`${base}/api/outputs?review=rejected`, {
      headers: { 'X-Ibatch-Token': token },
    });
    expect(((await rejected.json()) as { total: number }).total).toBe(1);
    journal.recordReview({
      jobName: JOB_NAME,
      runId: photo.runId,
      itemKey: photo.item,
      n: photo.n,
      decision: 'cleared',
      reviewer: 'test',
    });
  });

  it('applies its own decisions to the listing as a rebuild from the journal would show them', async () => {
    const { base, token } = await reviewServer(run);
    const outputs = await listing(base, token);
    const photo = outputs.find((o) => o.step === 'photos' && o.file);
    const clip = outputs.find((o) => o.step === 'clips' && o.file);
    if (!photo || !clip) throw new Error('no photo or clip');
    const decide = async (decision: object) => {
      const res = await fetch(`${base}/api/decisions`, {
        method: 'POST',
        headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/json' },
        body: JSON.stringify(decision),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      // What another connection builds from the journal alone.
      const reader = await openJournal(run.journalPath, { readonly: true });
      const rebuilt = buildListing(reader, JOB_NAME).outputs;
      reader.close();
      expect(await listing(base, token)).toEqual(rebuilt);
      return rebuilt;
    };
    const whole = { runId: photo.runId, item: photo.item, n: null };
    const one = { runId: photo.runId, item: photo.item, n: photo.n };
    // A whole item, then one output of it over that, then a filter, then cleared.
    await decide({ targets: [whole], decision: 'approved', note: 'keep' });
    const own = await decide({ targets: [one], decision: 'rejected', prompt: 'at dusk' });
    expect(own.find((o) => o.id === photo.id)).toMatchObject({
      review: 'rejected',
      editedPrompt: 'at dusk',
    });
    const clips = await decide({ filter: { step: 'clips' }, decision: 'approved' });
    expect(clips.find((o) => o.id === clip.id)?.review).toBe('approved');
    const cleared = await decide({
      targets: [whole, { runId: clip.runId, item: clip.item, n: null }],
      decision: 'cleared',
    });
    expect(cleared.find((o) => o.id === photo.id)).toMatchObject({
      review: 'unreviewed',
      reviewer: null,
      note: null,
    });
    await decide({ filter: { step: 'clips' }, decision: 'cleared' });
  });

  it('serves listed output files only, never a path out of the folder or through a link', async () => {
    const { base, token } = await reviewServer(run);
    const outputs = await listing(base, token);
    const photo = outputs.find((o) => o.step === 'photos' && o.file);
    if (!photo?.file) throw new Error('no photo');
    const good = await raw(base, `${fileUrl(photo.file)}?token=${token}`);
    expect(good.status).toBe(200);
    expect(good.headers['content-type']).toMatch(/^image\//);

    // A secret beside the folder and the journal: neither may be read.
    writeFileSync(path.join(run.dir, 'secret.txt'), 'TOP-SECRET');
    const escapes = [
      '/files/../secret.txt',
      '/files/%2e%2e/secret.txt',
      '/files/%2E%2E%2Fsecret.txt',
      '/files/..%2fsecret.txt',
      '/files/..%5csecret.txt',
      '/files/%2Fetc%2Fpasswd',
      '//etc/passwd',
      '/files//etc/passwd',
      `/files/${encodeURIComponent(path.join(run.dir, 'secret.txt'))}`,
      `/files/${encodeURIComponent(run.journalPath)}`,
      '/files/manifest.jsonl',
      `/files/${encodeURIComponent(`${photo.file}/../../secret.txt`)}`,
    ];
    for (const target of escapes) {
      const res = await raw(base, `${target}${target.includes('?') ? '&' : '?'}token=${token}`);
      expect([403, 404], target).toContain(res.status);
      expect(res.body).not.toContain('TOP-SECRET');
      expect(res.body).not.toContain('root:');
    }

    // A symlink planted in the folder under a listed name, pointing outside.
    const outside = path.join(tempDir('review-outside'), 'secret.png');
    writeFileSync(outside, 'TOP-SECRET');
    const planted = path.join(run.out, photo.file);
    const original = readFileSync(planted);
    rmSync(planted);
    symlinkSync(outside, planted);
    try {
      const res = await raw(base, `${fileUrl(photo.file)}?token=${token}`);
      expect(res.status).toBe(403);
      expect(res.body).not.toContain('TOP-SECRET');
    } finally {
      rmSync(planted);
      writeFileSync(planted, original);
    }
  });
});
