/**
 * Moving an older output aside so the newer one takes its readable name
 * (src/scheduler/move-aside.ts), at every point a kill -9 can leave it: the
 * bytes are never lost or rewritten, and what comes next (the move repeated,
 * or the repair pass) brings the journal to where the file is.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Journal } from '../../src/journal/index.js';
import { finishInterruptedMove, moveAside } from '../../src/scheduler/move-aside.js';
import { asideNameOf } from '../../src/scheduler/output-names.js';
import { sha256Hex } from '../../src/shared/index.js';
import { tempDir } from '../helpers/index.js';
import { intendAttempt, item, seedRun, submitAttempt, tempJournal } from '../journal/helpers.js';

const READABLE = 'hero/a001-1.png';
const BYTES = Buffer.from('the older output');
const OUTPUT = { runId: 'run-1', itemKey: 'a001', n: 1 };

/** A journal with one downloaded output at READABLE, and its file and sidecar on disk. */
async function setUp(): Promise<{ journal: Journal; out: string; aside: string }> {
  const journal = await tempJournal();
  seedRun(journal);
  journal.addItems('run-1', [item('a001')]);
  intendAttempt(journal, 'run-1', 'a001');
  submitAttempt(journal, 'run-1', 'a001', 1, ['g1']);
  journal.recordAttemptOutcome({
    ...{ runId: 'run-1', itemKey: 'a001', attemptNo: 1 },
    state: 'succeeded',
    itemState: 'succeeded',
    outputs: [{ n: 1, generationId: 'g1', url: 'http://x/g1.png', kind: 'image', modelId: 'm' }],
  });
  journal.markOutputDownloaded('run-1', 'a001', 1, {
    file: READABLE,
    sha256: sha256Hex(BYTES),
    bytes: BYTES.length,
    contentType: 'image/png',
  });
  const out = tempDir('aside');
  mkdirSync(path.join(out, 'hero'));
  writeFileSync(path.join(out, READABLE), BYTES);
  writeFileSync(path.join(out, `${READABLE}.json`), '{"sidecar":1}');
  return { journal, out, aside: asideNameOf(READABLE, OUTPUT) };
}

const fileOf = (journal: Journal) => journal.getOutput('run-1', 'a001', 1)?.file;

function expectMoved(journal: Journal, out: string, aside: string) {
  expect(fileOf(journal)).toBe(aside);
  expect(readFileSync(path.join(out, aside))).toEqual(BYTES);
  expect(readFileSync(path.join(out, `${aside}.json`), 'utf8')).toBe('{"sidecar":1}');
  expect(existsSync(path.join(out, READABLE))).toBe(false);
  expect(existsSync(path.join(out, `${READABLE}.json`))).toBe(false);
}

describe('moving an older output aside', () => {
  it('moves the file and its sidecar, then records it', async () => {
    const { journal, out, aside } = await setUp();
    expect(aside).toMatch(/^hero\/a001-1-[0-9a-f]{8}\.png$/);
    expect(moveAside(journal, out, OUTPUT, READABLE, aside)).toBe(true);
    expectMoved(journal, out, aside);
  });

  it('killed after the link, before the unlink: the move repeated finishes it', async () => {
    const { journal, out, aside } = await setUp();
    linkSync(path.join(out, `${READABLE}.json`), path.join(out, `${aside}.json`));
    linkSync(path.join(out, READABLE), path.join(out, aside));
    expect(moveAside(journal, out, OUTPUT, READABLE, aside)).toBe(true);
    expectMoved(journal, out, aside);
  });

  it('killed after the file moved, before the journal: the move repeated, or the repair pass, records it', async () => {
    for (const finish of ['move', 'repair'] as const) {
      const { journal, out, aside } = await setUp();
      for (const suffix of ['.json', '']) {
        linkSync(path.join(out, `${READABLE}${suffix}`), path.join(out, `${aside}${suffix}`));
        unlinkSync(path.join(out, `${READABLE}${suffix}`));
      }
      expect(fileOf(journal)).toBe(READABLE);
      if (finish === 'move') expect(moveAside(journal, out, OUTPUT, READABLE, aside)).toBe(true);
      else {
        const record = journal.getOutput('run-1', 'a001', 1);
        expect(record && (await finishInterruptedMove(journal, out, record, aside))).toBe(true);
      }
      expectMoved(journal, out, aside);
    }
  });

  it('an aside name holding another file: nothing moves, the caller picks another', async () => {
    const { journal, out, aside } = await setUp();
    writeFileSync(path.join(out, aside), 'a user file');
    expect(moveAside(journal, out, OUTPUT, READABLE, aside)).toBe(false);
    expect(fileOf(journal)).toBe(READABLE);
    expect(readFileSync(path.join(out, READABLE))).toEqual(BYTES);
    expect(readFileSync(path.join(out, aside), 'utf8')).toBe('a user file');
    // The repair pass never takes another file for the output's.
    const record = journal.getOutput('run-1', 'a001', 1);
    expect(record && (await finishInterruptedMove(journal, out, record, aside))).toBe(false);
  });
});
