/**
 * The API key's redaction, the last line of defence: text that quotes the API key and
 * reaches a sink directly (not through the client, which redacts first) is
 * still redacted by the sink: every journal op that writes text (items,
 * attempts, outputs, events, influencers), the manifest writer and the report.
 * Real SQLite files; every byte left behind is read.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { ManifestWriter, writeReport } from '../../src/outputs/index.js';
import { registerSecret } from '../../src/shared/index.js';
import { defer, tempDir } from '../helpers/index.js';
import { intendAttempt, item, seedRun, submitAttempt } from '../journal/helpers.js';
import { allFiles, leaksIn } from './helpers.js';

const KEY = `ifk_live_${'5e'.repeat(16)}`;
registerSecret(KEY);
/** A service text quoting the key in the forms the scanner looks for. */
const ECHO = `failed for ${KEY} (secret ${KEY.slice(9)}, b64 ${Buffer.from(KEY).toString('base64')})`;

describe('every sink redacts service text', () => {
  it('the journal, manifest and report hold no form of the key', async () => {
    const dir = tempDir('security');
    const journal = await openJournal(path.join(dir, '.ibatch', 'journal.db'));
    defer(() => journal.close());
    const runId = seedRun(journal);
    journal.addItems(runId, [item('a'), item('b')]);
    for (const itemKey of ['a', 'b']) {
      intendAttempt(journal, runId, itemKey);
      submitAttempt(journal, runId, itemKey, 1, [`g-${itemKey}`]);
    }
    journal.addOutputs(runId, 'a', [
      { n: 1, generationId: 'g-a', url: 'https://x.test/0.png', kind: 'image', modelId: 'm' },
    ]);
    journal.markOutputFailed(runId, 'a', 1, ECHO);
    journal.recordAttemptOutcome({
      runId,
      itemKey: 'b',
      attemptNo: 1,
      state: 'failed',
      itemState: 'failed',
      error: ECHO,
    });
    journal.setItemState(runId, 'b', { state: 'failed', error: ECHO });
    journal.appendEvent(runId, { type: 'item.failed', message: ECHO, data: { why: [ECHO] } });
    journal.saveInfluencer({
      scope: 's',
      jobName: 'spring',
      localId: 'ava',
      configHash: 'c',
      status: 'failed',
      error: ECHO,
    });
    // What was written reads back redacted (so the sinks really got the text).
    expect(journal.getItem(runId, 'b')?.error).toContain('[REDACTED]');
    expect(journal.listEvents(runId)[0]?.message).toContain('[REDACTED]');

    const outputDir = path.join(dir, 'out');
    const row = {
      step: 'portraits',
      item: 'b',
      generationId: 'g-b',
      kind: 'image',
      modelId: 'm',
      status: 'failed',
      creditsCost: 10,
      refunded: false,
      url: `https://x.test/0.png?key=${KEY}`,
      error: ECHO,
    } as const;
    const manifest = ManifestWriter.open(outputDir);
    manifest.append(row);
    manifest.rewrite([row, { ...row, item: 'c' }]);
    manifest.close();
    writeReport(outputDir, {
      run: { runId, jobName: 'spring', startedAt: new Date(0).toISOString(), status: ECHO },
      rows: [row],
      trainings: [
        { id: 'ava', name: 'Ava', status: 'failed', creditsCost: 5, refunded: true, error: ECHO },
      ],
      events: [{ at: new Date(0).toISOString(), message: ECHO }],
    });
    journal.close();

    const files = await allFiles(dir);
    expect(files.map((f) => path.relative(dir, f.file)).sort()).toEqual(
      expect.arrayContaining([
        '.ibatch/journal.db',
        'out/manifest.csv',
        'out/manifest.jsonl',
        'out/report.html',
      ]),
    );
    expect(leaksIn(files, KEY)).toEqual([]);
    // The scanner finds the text where it is (so the check can fail).
    expect(leaksIn([{ file: 'probe', bytes: ECHO }], KEY)).toEqual(['probe']);
  });
});
