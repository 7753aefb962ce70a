/**
 * Protected paths at the writer: `downloadOutput` never writes over a protected
 * path (the journal and its companions, the job file, its inputs), however
 * the target is spelled: directly, inside the journal's lock folder, or
 * through a symlink planted in the output folder. Real files, a real journal
 * and a real HTTP server on loopback.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { journalFiles, openJournal } from '../../src/journal/index.js';
import { downloadOutput, ProtectedPathError } from '../../src/outputs/index.js';
import { tempDir } from '../helpers/index.js';
import { makePng } from '../uploads/fixtures/media-samples.js';

const PNG = makePng(8, 8, [255, 0, 0]);
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function pngServer(): Promise<string> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'image/png');
    res.end(PNG);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/o/1`;
}

/** A job folder with a real journal in `.ibatch/`, a job file and one input. */
async function jobFolder() {
  const dir = tempDir('protected');
  const journalPath = path.join(dir, '.ibatch', 'journal.db');
  const journal = await openJournal(journalPath);
  journal.close();
  const jobFile = path.join(dir, 'job.yaml');
  const input = path.join(dir, 'photos', 'a.png');
  writeFileSync(jobFile, 'version: 1\n');
  mkdirSync(path.dirname(input));
  writeFileSync(input, 'input bytes');
  const guarded = [...journalFiles(journalPath), jobFile, input];
  return { dir, journalPath, jobFile, input, guarded, journalBytes: readFileSync(journalPath) };
}

async function refused(dest: string, guarded: readonly string[]): Promise<ProtectedPathError> {
  const error = await downloadOutput({
    url: await pngServer(),
    dest,
    maxBytes: 1_000_000,
    protectedPaths: guarded,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProtectedPathError);
  expect((error as ProtectedPathError).code).toBe('protected_path');
  expect((error as ProtectedPathError).retryable).toBe(false);
  return error as ProtectedPathError;
}

/** No `.part-` file left anywhere under `dir`. */
const partFiles = (dir: string) =>
  readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => name.includes('.part-'));

describe('downloadOutput refuses protected targets', () => {
  it('the journal itself: refused, the journal unchanged and still a database', async () => {
    const f = await jobFolder();
    await refused(f.journalPath, f.guarded);
    expect(readFileSync(f.journalPath).equals(f.journalBytes)).toBe(true);
    const journal = await openJournal(f.journalPath, { readonly: true });
    expect(journal.listRuns()).toEqual([]);
    journal.close();
    expect(partFiles(f.dir)).toEqual([]);
  });

  it('its -wal and -shm files and anything in its lock folder', async () => {
    const f = await jobFolder();
    await refused(`${f.journalPath}-wal`, f.guarded);
    await refused(`${f.journalPath}-shm`, f.guarded);
    await refused(path.join(`${f.journalPath}.locks`, 'job-x.lock'), f.guarded);
    expect(partFiles(f.dir)).toEqual([]);
  });

  it('the job file and its inputs', async () => {
    const f = await jobFolder();
    await refused(f.jobFile, f.guarded);
    await refused(f.input, f.guarded);
    expect(readFileSync(f.jobFile, 'utf8')).toBe('version: 1\n');
    expect(readFileSync(f.input, 'utf8')).toBe('input bytes');
  });

  it('through a symlink planted in the output folder, or an output folder that is a link', async () => {
    const f = await jobFolder();
    const out = path.join(f.dir, 'out');
    mkdirSync(out);
    symlinkSync(path.dirname(f.journalPath), path.join(out, 'state'));
    await refused(path.join(out, 'state', 'journal.db'), f.guarded);
    symlinkSync(path.dirname(f.journalPath), path.join(f.dir, 'out2'));
    await refused(path.join(f.dir, 'out2', 'journal.db'), f.guarded);
    expect(readFileSync(f.journalPath).equals(f.journalBytes)).toBe(true);
  });

  it('a name beside the protected ones is written as usual', async () => {
    const f = await jobFolder();
    const dest = path.join(f.dir, '.ibatch', 'journal.png');
    const result = await downloadOutput({
      url: await pngServer(),
      dest,
      maxBytes: 1_000_000,
      protectedPaths: f.guarded,
    });
    expect(result.path).toBe(dest);
    expect(readFileSync(dest).equals(PNG)).toBe(true);
  });
});
