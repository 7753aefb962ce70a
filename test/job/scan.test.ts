/**
 * `scanJob` (what `validate` and `plan` use) hands over exactly the items
 * `expandJob` returns, in the same order, with the same per-step counts,
 * across `from:` chains; and it reports problems only once every item is made.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expandJob,
  isJobFileError,
  type JobItem,
  loadJob,
  loadJobText,
  scanJob,
} from '../../src/job/index.js';
import { emulatorCatalog } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const models = emulatorCatalog();

describe('scanJob', () => {
  for (const file of [
    'jobs/quickstart.yaml',
    'examples/product-campaign/campaign.yaml',
    'examples/influencer-series/series.yaml',
    'examples/picked-clips/picked.yaml',
  ]) {
    it(`${file}: the same items, order and counts as expandJob`, () => {
      const job = loadJob(join(ROOT, file));
      const seen: JobItem[] = [];
      const scan = scanJob(job, models, (item) => seen.push(item));
      const expansion = expandJob(job, models);
      expect(seen).toEqual(expansion.items);
      expect(scan.steps).toEqual(
        [...expansion.byStep].map(([id, items]) => ({
          id,
          items: items.length,
          outputs: items.reduce((sum, item) => sum + item.expectedOutputs, 0),
        })),
      );
      expect(scan.warnings).toEqual(expansion.warnings);
    });
  }

  it('chains from: items to their source items and still throws every problem at the end', () => {
    const job = loadJobText(
      [
        'version: 1',
        'name: chain',
        'generations:',
        '  - id: stills',
        '    model: flux-portrait',
        '    copies: 2',
        '    matrix:',
        '      look: [a, b]',
        '    input:',
        '      prompt: "look {{ look }}"',
        '  - id: clips',
        '    model: kling-i2v',
        '    from: stills',
        '    input:',
        '      prompt: "move {{ look }}"',
        '      duration: 99',
        '',
      ].join('\n'),
      join(ROOT, 'chain.yaml'),
    );
    const seen: JobItem[] = [];
    let thrown: unknown;
    try {
      scanJob(job, models, (item) => seen.push(item));
    } catch (error) {
      thrown = error;
    }
    expect(isJobFileError(thrown)).toBe(true);
    expect(seen.filter((i) => i.stepId === 'stills')).toHaveLength(2);
    const clips = seen.filter((i) => i.stepId === 'clips');
    expect(clips.map((c) => c.source?.outputIndex)).toEqual([0, 1, 0, 1]);
    expect(new Set(clips.map((c) => c.source?.itemKey)).size).toBe(2);
  });
});
