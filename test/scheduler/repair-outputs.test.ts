import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { ManifestWriter } from '../../src/outputs/index.js';
import type { RunContext } from '../../src/scheduler/context.js';
import { DownloadStage } from '../../src/scheduler/downloads.js';
import { StopController } from '../../src/scheduler/stop-control.js';
import { sha256Hex, silentLogger } from '../../src/shared/index.js';
import { defer, runCliCaptured, testEmulator } from '../helpers/index.js';
import { envFor, imageJob, workspace } from './helpers.js';

const SCALE = 30;

const sha = (file: string) => sha256Hex(readFileSync(file));

describe('DownloadStage#verifyAndRepair', () => {
  it('restores missing and edited files to the same name; reports a lost one', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'repair-job', n: 4 }));
    const first = await runCliCaptured(['run', ws.jobPath], envFor(em, SCALE), ws.dir);
    expect(first.code, first.stderr + first.stdout).toBe(0);

    const journal = await openJournal(ws.journalPath);
    defer(() => journal.close());
    const [run] = journal.listRuns('repair-job');
    if (!run) throw new Error('no run recorded');
    const out = path.join(ws.dir, 'out');
    const outputs = journal.listOutputs(run.runId);
    expect(outputs).toHaveLength(4);
    const [deleted, edited, rewritten, lost] = outputs.map((o) => ({
      ...o,
      abs: path.join(out, o.file ?? ''),
    }));
    if (!deleted || !edited || !rewritten || !lost) throw new Error('expected 4 outputs');

    rmSync(deleted.abs);
    const bytes = readFileSync(edited.abs);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    writeFileSync(edited.abs, bytes); // same size, newer mtime, other bytes
    writeFileSync(rewritten.abs, readFileSync(rewritten.abs)); // newer mtime, same bytes
    expect(sha(edited.abs)).not.toBe(edited.sha256);

    const warnings: string[] = [];
    // DownloadStage reads only these fields of the run's context.
    const ctx = {
      runId: run.runId,
      journal,
      job: { name: 'repair' },
      outputDir: out,
      protectedPaths: [],
      stop: new StopController(),
      createQueue: new PQueue(),
      logger: silentLogger(),
      emit: (event: { type: string; message?: string }) => {
        if (event.type === 'warning') warnings.push(event.message ?? '');
      },
      record: (type: string, message: string, itemKey?: string) =>
        journal.appendEvent(run.runId, { type, message, itemKey: itemKey ?? null }),
    } as unknown as RunContext;
    const manifest = ManifestWriter.open(out);
    defer(() => manifest.close());
    const stage = new DownloadStage(ctx, manifest, () => new Map(), new Map(), 2);

    expect(await stage.verifyAndRepair([outputs])).toEqual({ repaired: 2, lost: 0 });
    for (const o of [deleted, edited, rewritten, lost])
      expect(sha(o.abs), o.file ?? '').toBe(o.sha256);
    const after = new Map(journal.listOutputs(run.runId).map((o) => [o.itemKey, o]));
    for (const o of [deleted, edited]) {
      expect(after.get(o.itemKey)).toMatchObject({
        state: 'downloaded',
        file: o.file,
        sha256: o.sha256,
      });
      expect(after.get(o.itemKey)?.updatedAt).toBeGreaterThanOrEqual(o.updatedAt);
    }
    const types = () => journal.listEvents(run.runId, { limit: 500 }).map((e) => e.type);
    expect(types().filter((t) => t === 'output.repaired')).toHaveLength(2);
    expect(warnings).toEqual([]);

    // The service is gone: a missing file cannot be restored, which is reported, not thrown.
    await em.stop();
    rmSync(lost.abs);
    expect(await stage.verifyAndRepair([journal.listOutputs(run.runId)])).toEqual({
      repaired: 0,
      lost: 1,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(lost.file ?? '');
    expect(types().filter((t) => t === 'output.lost')).toHaveLength(1);
  }, 60_000);
});
