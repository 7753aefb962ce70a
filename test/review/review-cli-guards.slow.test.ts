/**
 * The review page's guards and its end, against a real `ibatch review`
 * process with raw requests (so `Host` and `Origin` can be anything): a
 * `Host` that is not the listener's own address and port is refused with
 * 403 even with the token and a matching `Origin` (the DNS-rebinding
 * shape); a POST from a foreign `Origin` is refused; the right `Host` and
 * token work. Decisions made on the page are in manifest.jsonl and
 * manifest.csv once `review` exits 0 on SIGINT or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import type { ManifestRow } from '../../src/outputs/index.js';
import type { ReviewedOutput } from '../../src/review/server/index.js';
import { firstStdoutLine, manifestRows, parseCsv, spawnCli } from '../helpers/index.js';
import { JOB_NAME, pipelineRun, type RunDone, rawRequest } from './helpers.js';

let run: RunDone;
beforeAll(async () => {
  run = await pipelineRun('review-cli-guards');
}, 120_000);

/** `ibatch review` of the run's job: its base address, port, token and process. */
async function startReview(reviewer: string) {
  const child = spawnCli(['review', path.basename(run.job), '--reviewer', reviewer], {
    cwd: run.dir,
    env: run.env,
  });
  const url = new URL(await firstStdoutLine(child));
  const token = url.searchParams.get('token') ?? '';
  return { child, base: url.origin, port: url.port, token };
}

async function reviewCount(): Promise<number> {
  const journal = await openJournal(run.journalPath, { readonly: true });
  try {
    return journal.latestReviews(JOB_NAME).length;
  } finally {
    journal.close();
  }
}

function decisionBody(output: ReviewedOutput, decision: string, note?: string): string {
  return JSON.stringify({
    targets: [{ runId: output.runId, item: output.item, n: output.n }],
    decision,
    ...(note ? { note } : {}),
  });
}

function csvRows(): Array<Record<string, string>> {
  const csv = parseCsv(readFileSync(path.join(run.out, 'manifest.csv'), 'utf8'));
  return csv.records.map((record) =>
    Object.fromEntries(csv.header.map((name) => [name, csv.cell(record, name) ?? ''])),
  );
}

describe('ibatch review: Host and Origin guards (real process)', () => {
  it('refuses a foreign Host with the token (with or without a matching Origin), a foreign Origin, and ::1 beside 127.0.0.1', async () => {
    const { child, base, port, token } = await startReview('mallory');
    try {
      const listed = await rawRequest(base, '/api/outputs', {
        headers: { 'X-Ibatch-Token': token },
      });
      expect(listed.status, listed.body).toBe(200);
      const [first] = (JSON.parse(listed.body) as { outputs: ReviewedOutput[] }).outputs;
      if (!first) throw new Error('no output listed');
      const body = decisionBody(first, 'approved');
      const post = (headers: Record<string, string>) =>
        rawRequest(base, '/api/decisions', {
          method: 'POST',
          headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/json', ...headers },
          body,
        });
      const before = await reviewCount();
      const evil = `evil.example:${port}`;
      const refused = [
        await post({ Host: evil, Origin: `http://${evil}` }),
        await post({ Host: evil }),
        await post({ Origin: 'http://evil.example' }),
        await post({ Origin: `http://${evil}` }),
        await post({ Host: `[::1]:${port}`, Origin: `http://[::1]:${port}` }),
        await post({ Host: `127.0.0.1:${Number(port) + 1}` }),
        await rawRequest(base, `/api/outputs?token=${token}`, { headers: { Host: evil } }),
        await rawRequest(base, `/?token=${token}`, { headers: { Host: evil } }),
      ];
      expect(refused.map((r) => r.status)).toEqual(refused.map(() => 403));
      expect(refused[0]?.body).toContain(`127.0.0.1:${port}`);
      expect(await reviewCount()).toBe(before);

      // The listener's own names: 127.0.0.1:PORT, and localhost:PORT (case aside).
      const own = await post({ Origin: `http://127.0.0.1:${port}` });
      expect(own.status, own.body).toBe(200);
      const named = await rawRequest(base, `/api/outputs?token=${token}`, {
        headers: { Host: `LOCALHOST:${port}` },
      });
      expect(named.status, named.body).toBe(200);
      expect(await reviewCount()).toBe(before + 1);
    } finally {
      child.child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    }
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'puts the decisions made on the page into manifest.jsonl and manifest.csv when it exits on %s',
    async (signal) => {
      const reviewer = `ana-${signal.toLowerCase()}`;
      const { child, base, token } = await startReview(reviewer);
      const listed = await rawRequest(base, '/api/outputs', {
        headers: { 'X-Ibatch-Token': token },
      });
      const outputs = (JSON.parse(listed.body) as { outputs: ReviewedOutput[] }).outputs.filter(
        (o): o is ReviewedOutput & { file: string } => o.file !== null,
      );
      const [approved, rejected] = outputs;
      if (!approved || !rejected) throw new Error('fewer than two outputs listed');
      for (const [output, decision, note] of [
        [approved, 'approved', undefined],
        [rejected, 'rejected', `too dark (${signal})`],
      ] as const) {
        const res = await rawRequest(base, '/api/decisions', {
          method: 'POST',
          headers: { 'X-Ibatch-Token': token, 'Content-Type': 'application/json' },
          body: decisionBody(output, decision, note),
        });
        expect(res.status, res.body).toBe(200);
      }
      // In the journal at once; the manifest still says what it said before.
      const jsonl = path.join(run.out, 'manifest.jsonl');
      const byFile = () => new Map(manifestRows<ManifestRow>(jsonl).map((r) => [r.file, r]));
      expect(byFile().get(approved.file)?.reviewer).not.toBe(reviewer);

      child.child.kill(signal);
      const exit = await child.exited;
      expect(exit.code, exit.stderr).toBe(0);

      const rows = byFile();
      expect(rows.get(approved.file)).toMatchObject({ review: 'approved', reviewer });
      expect(rows.get(rejected.file)).toMatchObject({
        review: 'rejected',
        reviewer,
        note: `too dark (${signal})`,
      });
      expect(rows.get(approved.file)?.reviewedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      const csv = new Map(csvRows().map((r) => [r.file, r]));
      expect(csv.get(approved.file)).toMatchObject({ review: 'approved', reviewer });
      expect(csv.get(rejected.file)).toMatchObject({
        review: 'rejected',
        reviewer,
        note: `too dark (${signal})`,
      });
      expect(csv.get(rejected.file)?.reviewedAt).toBe(rows.get(rejected.file)?.reviewedAt);
    },
    60_000,
  );
});
