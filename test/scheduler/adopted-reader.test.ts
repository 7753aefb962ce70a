/**
 * `adoptedReader` is the journal `recordAdoption` leaves, read without
 * writing (what `plan` decides on after a lost journal): every read the
 * decision makes answers the same on both.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { newRunId } from '../../src/journal/index.js';
import type { Adoption } from '../../src/scheduler/adopt-manifest.js';
import { recordAdoption } from '../../src/scheduler/adopt-manifest.js';
import { adoptedReader } from '../../src/scheduler/adopted-reader.js';
import type { JournalReader } from '../../src/scheduler/decide/run-history.js';
import { silentLogger } from '../../src/shared/index.js';
import { tempDir } from '../helpers/index.js';
import { tempJournal } from '../journal/helpers.js';

const SERVICE = 'http://service.test';
const SCOPE = `${SERVICE}#acct`;

function job() {
  const dir = tempDir('adopted-reader');
  const file = path.join(dir, 'job.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      'name: spring',
      'output: out',
      'generations:',
      '  - id: shots',
      '    model: sdxl-lite',
      '    input: { prompt: "a street" }',
      '',
    ].join('\n'),
  );
  return loadJob(file);
}

function adoption(jobName: string, withItems: boolean): Adoption {
  const runId = `adopted-${newRunId()}`;
  const adopted = (key: string, generationId: string, request: Record<string, unknown>) => ({
    item: {
      itemKey: key,
      stepId: key === 'clip' ? 'clips' : 'shots',
      kind: 'image',
      modelId: 'sdxl-lite',
      request,
      requestHash: `hash-${key}`,
      sourceItemKey: key === 'clip' ? 'shot' : null,
    },
    attempt: { idempotencyKey: `ib1-${runId}-${key}`, request },
    outputs: [
      {
        output: { n: 1, generationId, url: `https://cdn/${key}.png`, kind: 'image', modelId: 'm' },
        file: { file: `${key}.png`, sha256: 'f'.repeat(64), bytes: 7, contentType: 'image/png' },
      },
    ],
  });
  return {
    jobName,
    service: SERVICE,
    runId,
    items: withItems
      ? [
          adopted('shot', 'g-shot', { prompt: 'a street', influencerId: 'inf-1' }),
          adopted('clip', 'g-clip', { prompt: 'dolly', generationId: 'g-shot' }),
        ]
      : [],
    release: [],
    influencers: [
      { scope: SCOPE, jobName, localId: 'mia', configHash: 'cfg', influencerId: 'inf-1' },
    ],
    listed: 2,
  };
}

/** What the decision reads of a journal, as comparable values (by key: their order decides nothing). */
function reads(reader: JournalReader, runId: string) {
  const lookup = { scope: SCOPE, jobName: 'spring', localId: 'mia', configHash: 'cfg' };
  const influencer = reader.findInfluencer(lookup);
  const run = reader.listRuns('spring', 50)[0];
  return {
    latest: Object.fromEntries(reader.latestItems('spring', SERVICE)),
    elsewhere: Object.fromEntries(reader.latestItems('spring', 'http://other.test')),
    outputs: [...reader.listOutputs(runId)]
      .sort((a, b) => a.itemKey.localeCompare(b.itemKey))
      .map(({ itemKey, n, generationId, url, file, sha256, bytes, state }) => ({
        ...{ itemKey, n, generationId, url, file, sha256, bytes, state },
      })),
    influencer: influencer && {
      status: influencer.status,
      influencerId: influencer.influencerId,
      runId: influencer.runId,
      creditsCost: influencer.creditsCost,
    },
    otherConfig: reader.findInfluencer({ ...lookup, configHash: 'other' }),
    run: run && { runId: run.runId, status: run.status, service: run.options },
    named: reader.getRun(runId)?.status,
  };
}

describe('adoptedReader', () => {
  for (const withItems of [true, false]) {
    it(`reads as the journal recordAdoption writes (${withItems ? 'items and an influencer' : 'an influencer alone'})`, async () => {
      const loaded = job();
      const planned = adoption(loaded.name, withItems);
      const snapshot = { service: SERVICE, scope: SCOPE };
      const written = await tempJournal();
      recordAdoption(written, loaded, planned, snapshot, silentLogger());
      const empty = await tempJournal();
      const view = adoptedReader(empty, loaded, planned, snapshot);

      const expected = reads(written, planned.runId);
      expect(reads(view, planned.runId)).toEqual(expected);
      // Not vacuous: the adoption is there to read.
      expect(expected.influencer?.status).toBe('succeeded');
      expect(Object.keys(expected.latest)).toHaveLength(withItems ? 2 : 0);
      expect(expected.outputs).toHaveLength(withItems ? 2 : 0);
      if (withItems) expect(expected.latest.clip?.sourceGenerationId).toBe('g-shot');
    });
  }
});
