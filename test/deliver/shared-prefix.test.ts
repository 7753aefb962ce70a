/**
 * What a delivery reads of its prefix's manifest before sending anything
 * (src/deliver/shared-prefix.ts): the other jobs' rows (a torn line and this
 * job's own rows left out), a refusal when one of its objects is another
 * job's output or sidecar, and a manifest it may not read (403) told in a
 * warning, the delivery going on. Against a loopback server answering as a
 * store would.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryConflictError } from '../../src/deliver/index.js';
import { otherJobsRows } from '../../src/deliver/shared-prefix.js';
import { parseS3Url } from '../../src/job/index.js';
import { createLogger } from '../../src/shared/index.js';
import { answering, withTestCredentials } from '../helpers/answering-store.js';
import { capture, jsonLogs } from '../helpers/index.js';
import { FIXTURE_ROWS } from '../outputs/fixtures/rows.js';

withTestCredentials();

/** A whole manifest row (a fixture's) of `job` (none: an older manifest's) naming `file`. */
const row = (job: string | undefined, file: string) => {
  const { job: _none, ...base } = FIXTURE_ROWS[0]!;
  return JSON.stringify({ ...base, ...(job === undefined ? {} : { job }), item: file, file });
};

const destination = parseS3Url('s3://media/shared');
const object = (key: string) => ({
  bucket: 'media',
  key,
  source: { body: Buffer.alloc(0) },
  bytes: 0,
  contentType: 'image/png',
  sha256: 'b'.repeat(64),
});

function logger() {
  const sink = capture();
  return { sink, log: createLogger({ format: 'json', destination: sink }) };
}

describe('the prefix manifest a delivery reads first', () => {
  it("keeps the other jobs' rows in order; this job's, a row naming no job and a torn line are left out", async () => {
    const body = [
      row('a', 'shots/one.png'),
      row('mine', 'shots/mine.png'),
      '{"torn":',
      row(undefined, 'shots/old.png'),
      row('b', 'shots/two.png'),
    ].join('\n');
    const { store } = await answering({ get: 200, body });
    const others = await otherJobsRows(
      store,
      destination,
      'mine',
      [object('shared/shots/new.png')],
      logger().log,
    );
    expect(others.map((r) => [r.job, r.file])).toEqual([
      ['a', 'shots/one.png'],
      ['b', 'shots/two.png'],
    ]);
  });

  it.each(['shared/shots/one.png', 'shared/shots/one.png.json'])(
    "refuses when %s, another job's output or sidecar, would be overwritten",
    async (key) => {
      const { store, seen } = await answering({ get: 200, body: row('a', 'shots/one.png') });
      const error = await otherJobsRows(
        store,
        destination,
        'mine',
        [object(key)],
        logger().log,
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryConflictError);
      expect(error).toMatchObject({
        code: 'delivery_conflict',
        exitCode: 4,
        stopReason: 'delivery',
      });
      expect((error as Error).message).toContain(
        `s3://media/${key} is an output the job "a" delivered`,
      );
      expect(seen).toEqual(['GET']);
    },
  );

  it.each([
    [404, 'missing'],
    [403, 'forbidden'],
  ])('a GET answered %i reads as %s, no rows', async (status, absence) => {
    const { store } = await answering({ get: status });
    expect(await store.read('media', 'shared/manifest.jsonl')).toBe(absence);
    const { sink, log } = logger();
    expect(await otherJobsRows(store, destination, 'mine', [], log)).toEqual([]);
    const warnings = jsonLogs(sink.text()).filter((line) => line.level === 40);
    // Only a 403 is worth a word: the other jobs' rows may be there, unread.
    expect(warnings.map((w) => w.msg)).toEqual(
      status === 403 ? [expect.stringContaining('could not be read (HTTP 403')] : [],
    );
  });
});
