import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { itemKey, keyBasis } from '../../src/job/keys.js';
import { openJournal } from '../../src/journal/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { parseCsv, runCliCaptured, testEmulator } from '../helpers/index.js';
import { envFor, imageJob, workspace } from './helpers.js';

const SCALE = 30;

const sha = (file: string) => sha256Hex(readFileSync(file));

async function runIdsOldestFirst(journalPath: string): Promise<string[]> {
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    return journal
      .listRuns()
      .reverse()
      .map((r) => r.runId);
  } finally {
    journal.close();
  }
}

describe('outputs of earlier runs', () => {
  it('a regenerated item gets a new file under the readable name; earlier files (moved aside) and a user file are kept', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const env = envFor(em, SCALE);
    const ws = workspace(imageJob({ name: 'keep-job', n: 2 }));
    const out = path.join(ws.dir, 'out');
    // A user's file exactly where the first item's first output would go.
    const s1 = itemKey(keyBasis('shots', { scene: 's1' }, 0), { scene: 's1' }, 1);
    const userFile = path.join(out, 'shots', 's1-1.png');
    mkdirSync(path.dirname(userFile), { recursive: true });
    writeFileSync(userFile, 'the user made this, not ibatch');

    const first = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(first.code, first.stderr + first.stdout).toBe(0);
    const firstRows = readManifest(out);
    expect(firstRows.map((r) => r.item).sort()).toContain(s1);
    expect(readFileSync(userFile, 'utf8')).toBe('the user made this, not ibatch');
    const firstFiles = new Map(
      firstRows.map((r) => [r.file ?? '', sha(path.join(out, r.file ?? ''))]),
    );
    expect(firstFiles.size).toBe(2);
    expect([...firstFiles.keys()]).not.toContain('shots/s1-1.png');
    for (const row of firstRows) expect(firstFiles.get(row.file ?? '')).toBe(row.sha256);

    // Same item keys, new requests: a finished job changed, so a new run regenerates both.
    ws.write(imageJob({ name: 'keep-job', n: 2, prompt: 'a busy market, scene' }));
    const second = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(second.code, second.stderr + second.stdout).toBe(0);
    const [run1, run2] = await runIdsOldestFirst(ws.journalPath);
    expect(run2).toBeDefined();

    expect(readFileSync(userFile, 'utf8')).toBe('the user made this, not ibatch');

    // The manifest lists both runs' files; the second run's are current and
    // took the readable names; the earlier bytes are still there, unchanged,
    // moved aside to suffixed names (with their sidecars).
    const rows = readManifest(out);
    expect(rows).toHaveLength(4);
    const older = rows.filter((r) => r.runId === run1);
    const newer = rows.filter((r) => r.runId === run2);
    expect(older.map((r) => r.sha256).sort()).toEqual([...firstFiles.values()].sort());
    for (const row of older) {
      expect(sha(path.join(out, row.file ?? '')), row.file).toBe(row.sha256);
      expect(existsSync(path.join(out, `${row.file}.json`)), `${row.file}.json`).toBe(true);
    }
    expect(older.every((r) => r.current === false)).toBe(true);
    expect(older.every((r) => r.currentReason === `superseded by ${run2}`)).toBe(true);
    expect(newer).toHaveLength(2);
    expect(newer.every((r) => r.current === true && r.status === 'succeeded')).toBe(true);
    expect(new Set(newer.map((r) => r.item))).toEqual(new Set(older.map((r) => r.item)));
    // s2's readable name went to its new file (s1's is the user's: both its files are suffixed).
    expect(newer.map((r) => r.file)).toContain('shots/s2-1.png');
    expect(older.map((r) => r.file)).not.toContain('shots/s2-1.png');
    expect(older.find((r) => r.item === s1)?.file).toBe(firstRows.find((r) => r.item === s1)?.file);
    for (const row of newer) expect(sha(path.join(out, row.file ?? ''))).toBe(row.sha256);
    const csv = parseCsv(readFileSync(path.join(out, 'manifest.csv'), 'utf8'));
    expect(csv.records).toHaveLength(4);
    expect(csv.records.filter((r) => csv.cell(r, 'current') === 'true')).toHaveLength(2);

    // Each run's report shows its own files only.
    const report = () => readFileSync(path.join(out, 'report.html'), 'utf8');
    for (const row of newer) expect(report()).toContain(row.file ?? '');
    for (const row of older) expect(report()).not.toContain(row.file ?? '');
    const again = await runCliCaptured(['report', run1 ?? '', ws.jobPath], env, ws.dir);
    expect(again.code, again.stderr).toBe(0);
    for (const row of older) expect(report()).toContain(row.file ?? '');
    expect(report()).toContain(`superseded by ${run2}`);
    // `report` rewrote the manifest: still both runs.
    expect(readManifest(out)).toHaveLength(4);
    expect(existsSync(userFile)).toBe(true);
  }, 60_000);
});
