/**
 * `readManifestUncovered` (src/outputs/manifest-read.ts): the rows a reader
 * already knows the outcome of are neither validated nor returned, yet still
 * decide which run's rows of an item are its latest. Real files.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RawRow, readManifestUncovered } from '../../src/outputs/index.js';
import { tempDir } from '../helpers/index.js';

function row(item: string, runId: string, extra: Record<string, unknown> = {}) {
  return {
    job: 'shop',
    runId,
    step: 'hero',
    item,
    n: 1,
    generationId: `${runId}-${item}`,
    kind: 'image',
    modelId: 'ideogram-influencer',
    status: 'succeeded',
    creditsCost: 6,
    refunded: false,
    url: null,
    ...extra,
  };
}

describe('readManifestUncovered', () => {
  it('skips covered rows, keeps their place: an item of the rows returned whose last row is covered is told, a newer uncovered row is returned', () => {
    const dir = tempDir('manifest-read');
    const lines = [
      row('a', 'r1'), // covered, its only row
      row('b', 'r1'), // covered, then made again by r2 (not covered)
      row('b', 'r2'),
      row('c', 'r2'), // not covered, then covered by a later run
      row('c', 'r3'),
      row('d', 'r1', { job: 'other' }), // another job's row: never covered here
      row('e', 'r1', { influencerId: 'inf-1' }), // names an influencer: always read whole
    ];
    writeFileSync(
      join(dir, 'manifest.jsonl'),
      `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"torn":\n`,
    );
    const covered = (raw: RawRow): raw is RawRow & { item: string } =>
      raw.job === 'shop' &&
      raw.influencerId === undefined &&
      (raw.runId === 'r1' || raw.runId === 'r3');
    const skipped: number[] = [];
    const { rows, coveredLast } = readManifestUncovered(
      dir,
      () => true,
      covered,
      (line) => skipped.push(line),
    );
    expect(rows.map((r) => `${r.item}@${r.runId}`)).toEqual(['b@r2', 'c@r2', 'd@r1', 'e@r1']);
    // Of the items of the rows returned: 'a' has none, its only row is covered.
    expect([...coveredLast].sort()).toEqual(['c']);
    expect(skipped).toEqual([8]);
  });
});
