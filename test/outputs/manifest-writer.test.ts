import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MANIFEST_CSV_COLUMNS,
  MANIFEST_LOCK,
  type ManifestRow,
  ManifestWriter,
  manifestRowKey,
  markCurrentRows,
  readManifest,
  renderManifest,
  summarizeCosts,
} from '../../src/outputs/index.js';
import { parseCsv, tempDir } from '../helpers/index.js';
import { FIXTURE_ROWS, FIXTURE_TOTALS } from './fixtures/rows.js';

const [first, second, failed, video, blocked] = FIXTURE_ROWS as [
  (typeof FIXTURE_ROWS)[number],
  (typeof FIXTURE_ROWS)[number],
  (typeof FIXTURE_ROWS)[number],
  (typeof FIXTURE_ROWS)[number],
  (typeof FIXTURE_ROWS)[number],
];

const jsonlRows = (dir: string) =>
  readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

describe('ManifestWriter', () => {
  it('appends each row to JSONL and CSV as it goes (readable before close)', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    expect(writer.append(first)).toBe('appended');
    expect(jsonlRows(dir)).toEqual([first]);
    for (const row of [second, failed, video, blocked]) writer.append(row);
    expect(jsonlRows(dir)).toEqual(FIXTURE_ROWS);
    const csv = readFileSync(path.join(dir, 'manifest.csv'), 'utf8');
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(`\uFEFF${['file', ...MANIFEST_CSV_COLUMNS].join(',')}`);
    expect(csv).toContain('"Ava on a beach, ""golden"" hour, 50% off"');
    expect(csv).toContain('"provider failed, line1\nline2"');
    expect(csv).toContain(`"'=HYPERLINK(""http://evil"")"`); // formula neutralised
    expect(csv.endsWith('\r\n')).toBe(true);
    writer.close();
  });

  it('gives each template variable its own column, in job order, after `file`', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    writer.append({ ...first, vars: { scene: 'à Paris café', product: '=silk scarf' } });
    // A row naming a variable the header lacks: the CSV is rewritten with it.
    writer.append({ ...second, vars: { scene: 'beach', product: 'tote', step: 3 } });
    writer.append({ ...video, vars: { scene: 'beach' } });
    const csv = parseCsv(readFileSync(path.join(dir, 'manifest.csv'), 'utf8'));
    expect(csv.bom).toBe(true);
    expect(csv.header).toEqual(['file', 'scene', 'product', 'vars.step', ...MANIFEST_CSV_COLUMNS]);
    expect(csv.records.map((r) => [r[0], r[1], r[2], r[3]])).toEqual([
      [first.file, 'à Paris café', "'=silk scarf", ''],
      [second.file, 'beach', 'tote', '3'],
      [video.file, 'beach', '', ''],
    ]);
    expect(readManifest(dir)[0]?.vars).toEqual({ scene: 'à Paris café', product: '=silk scarf' });
    writer.close();
  });

  it('does not duplicate rows on resume and replaces a superseded row', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    writer.append(first);
    writer.append(failed);
    writer.close();
    const resumed = ManifestWriter.open(dir);
    expect(resumed.append(first)).toBe('unchanged');
    const retried = {
      ...failed,
      n: 1,
      status: 'succeeded' as const,
      refunded: false,
      file: 'p/x.png',
      error: undefined,
    };
    delete retried.error;
    expect(resumed.append(retried)).toBe('replaced');
    resumed.append(second);
    expect(jsonlRows(dir)).toEqual([first, retried, second]);
    expect(
      readFileSync(path.join(dir, 'manifest.csv'), 'utf8').split('\r\n').filter(Boolean),
    ).toHaveLength(4);
    resumed.close();
  });

  it('survives a line torn by a crash: the torn line is dropped and both files repaired', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    writer.append(first);
    writer.close();
    appendFileSync(path.join(dir, 'manifest.jsonl'), '{"step":"portraits","item":"x","gen'); // killed mid-write
    const reopened = ManifestWriter.open(dir);
    expect(reopened.rows()).toEqual([first]);
    reopened.append(second);
    expect(jsonlRows(dir)).toEqual([first, second]);
    reopened.close();
  });

  it('reads and repairs the rows on disk at its first append, not at open (a resume creates first)', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    writer.append(first);
    writer.close();
    const torn = `${readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')}{"step":"portraits","item":"x"`;
    writeFileSync(path.join(dir, 'manifest.jsonl'), torn);
    const csvBefore = readFileSync(path.join(dir, 'manifest.csv'), 'utf8');
    const reopened = ManifestWriter.open(dir);
    // Opening read nothing and wrote nothing: both files are as the crash left them.
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(torn);
    expect(readFileSync(path.join(dir, 'manifest.csv'), 'utf8')).toBe(csvBefore);
    // The first append repairs them first, then knows the rows already there.
    expect(reopened.append(first)).toBe('unchanged');
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(
      `${JSON.stringify(first)}\n`,
    );
    expect(reopened.append(second)).toBe('appended');
    expect(jsonlRows(dir)).toEqual([first, second]);
    expect(parseCsv(readFileSync(path.join(dir, 'manifest.csv'), 'utf8')).records).toHaveLength(2);
    reopened.close();
  });

  it('repairs what it finds at its first append as a Map of the rows by key would, from lines it does not hold', () => {
    const dir = tempDir('manifest');
    // Written by hand (another tool, an older writer): a key listed twice
    // (written once, in its first place, with its last row), a URL with a
    // password (redacted), a variable only a late row names (a CSV column),
    // a torn line (dropped).
    const leaky = { ...video, url: 'https://user:hunter2@cdn.example/v.mp4' };
    const renamed = { ...first, label: 'renamed' };
    const late = { ...blocked, vars: { scene: 'late' } };
    const onDisk = [first, leaky, second, renamed, late];
    writeFileSync(
      path.join(dir, 'manifest.jsonl'),
      `${onDisk.map((row) => JSON.stringify(row)).join('\n')}\n{"step":"portraits","it`,
    );
    const writer = ManifestWriter.open(dir);
    expect(writer.append(second)).toBe('unchanged');
    expect(writer.append(renamed)).toBe('unchanged');
    const expected = renderManifest([renamed, leaky, second, late]);
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(expected.jsonl);
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).not.toContain('hunter2');
    expect(readFileSync(path.join(dir, 'manifest.csv'), 'utf8')).toBe(expected.csv);
    // A changed row of a known key is a replacement in its place; a new key goes last.
    const retitled = { ...late, label: 'retitled' };
    expect(writer.append(retitled)).toBe('replaced');
    expect(writer.append(failed)).toBe('appended');
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(
      renderManifest([renamed, leaky, second, retitled, failed]).jsonl,
    );
    writer.close();
    expect(readdirSync(dir).sort()).toEqual(['manifest.csv', 'manifest.jsonl']);
  });

  it('takes files as a writer left them as they are at its first append: read, not rewritten', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    writer.append(first);
    writer.append(second);
    writer.close();
    const inodes = () =>
      ['manifest.jsonl', 'manifest.csv'].map((f) => statSync(path.join(dir, f)).ino);
    const before = inodes();
    const resumed = ManifestWriter.open(dir);
    expect(resumed.append(second)).toBe('unchanged');
    expect(resumed.append(failed)).toBe('appended');
    resumed.close();
    // Appended in place: the same two files, holding what a render of the rows holds.
    expect(inodes()).toEqual(before);
    const expected = renderManifest([first, second, failed]);
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(expected.jsonl);
    expect(readFileSync(path.join(dir, 'manifest.csv'), 'utf8')).toBe(expected.csv);
  });

  it.each([
    ['while the rows on disk are read ahead', false],
    ['after they were read ahead', true],
  ])(
    'a row another writer appends %s is seen at the first append: none lost, none twice',
    async (_when, afterReady) => {
      const dir = tempDir('manifest');
      // More rows than one slice of the read ahead: it is still reading when the next line runs.
      const rows = Array.from({ length: 2500 }, (_, i) => ({ ...first, item: `row-${i}` }));
      ManifestWriter.open(dir).rewrite(rows);
      const theirs = { ...second, item: 'appended-by-another-writer' };
      const resumed = ManifestWriter.open(dir);
      resumed.readAhead();
      if (afterReady) await resumed.ready();
      const other = ManifestWriter.open(dir);
      other.append(theirs);
      other.close();
      await resumed.ready();
      expect(resumed.append(theirs)).toBe('unchanged');
      expect(resumed.append(rows[1234] ?? first)).toBe('unchanged');
      expect(resumed.append(video)).toBe('appended');
      resumed.close();
      const keys = readManifest(dir).map(manifestRowKey);
      expect(keys).toHaveLength(rows.length + 2);
      expect(new Set(keys).size).toBe(keys.length);
    },
  );

  it('rows read ahead and unchanged since are taken at the first append as the files hold them', async () => {
    const dir = tempDir('manifest');
    const rows = Array.from({ length: 2500 }, (_, i) => ({ ...first, item: `row-${i}` }));
    ManifestWriter.open(dir).rewrite(rows);
    const resumed = ManifestWriter.open(dir);
    resumed.readAhead();
    await resumed.ready();
    expect(resumed.append(rows[0] ?? first)).toBe('unchanged');
    expect(resumed.append(video)).toBe('appended');
    resumed.close();
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(
      renderManifest([...rows, video]).jsonl,
    );
  });

  it('repairs a CSV a kill left behind the JSONL: a row short, or older than it', () => {
    const rewritten = (prepare: (dir: string) => void) => {
      const dir = tempDir('manifest');
      const writer = ManifestWriter.open(dir);
      writer.append(first);
      writer.append(second);
      writer.close();
      prepare(dir);
      const resumed = ManifestWriter.open(dir);
      expect(resumed.append(failed)).toBe('appended');
      resumed.close();
      return readFileSync(path.join(dir, 'manifest.csv'), 'utf8');
    };
    // Killed between an append's two writes: the CSV lacks the last row.
    const short = rewritten((dir) =>
      writeFileSync(path.join(dir, 'manifest.csv'), renderManifest([first]).csv),
    );
    expect(short).toBe(renderManifest([first, second, failed]).csv);
    // Killed between a rewrite's two renames: the JSONL is new (a row replaced
    // in the middle), the CSV the one before, with the same first and last line.
    const renamed = { ...first, label: 'renamed' };
    const older = rewritten((dir) => {
      writeFileSync(path.join(dir, 'manifest.jsonl'), renderManifest([renamed, second]).jsonl);
      const jsonlTime = statSync(path.join(dir, 'manifest.jsonl')).mtime;
      const csvTime = new Date(jsonlTime.getTime() - 1000);
      utimesSync(path.join(dir, 'manifest.csv'), csvTime, csvTime);
    });
    expect(older).toBe(renderManifest([renamed, second, failed]).csv);
  });

  it('rewrites atomically from the journal and validates rows', () => {
    const dir = tempDir('manifest');
    writeFileSync(path.join(dir, 'manifest.jsonl'), `${JSON.stringify(first)}\n`);
    const writer = ManifestWriter.open(dir);
    writer.rewrite([video, blocked]);
    expect(readManifest(dir)).toEqual([video, blocked]);
    expect(() => writer.append({ ...first, sha256: 'not-a-hash' })).toThrow();
    writer.close();
  });
});

describe('ManifestWriter.replace (the rebuild from the journal, streamed)', () => {
  it('writes the bytes the in-memory render writes, from a source it iterates once (its spool left behind in no file)', () => {
    const dir = tempDir('manifest');
    // Two runs of one item (the newer succeeded: current), a variable only a
    // late row names (a CSV column), and a key listed twice (written once,
    // where it first appears, with its last row).
    const older = { ...failed, runId: 'run-0' };
    const renamed = { ...second, label: 'renamed' };
    const rows: ManifestRow[] = [
      older,
      first,
      second,
      failed,
      video,
      { ...blocked, vars: { scene: 'late' } },
      renamed,
    ];
    let passes = 0;
    const seen: ManifestRow[] = [];
    ManifestWriter.replace(
      dir,
      () => ({
        before: [],
        own: function* () {
          passes += 1;
          yield* rows;
        },
        after: [],
      }),
      { onRow: (row) => seen.push(row) },
    );
    // What the writer did with every row in memory: a Map by key (first place, last row).
    const byKey = new Map(markCurrentRows(rows).map((row) => [manifestRowKey(row), row]));
    const expected = renderManifest([...byKey.values()]);
    expect(passes).toBe(1);
    expect(readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')).toBe(expected.jsonl);
    expect(readFileSync(path.join(dir, 'manifest.csv'), 'utf8')).toBe(expected.csv);
    expect(seen.map((row) => row.current)).toEqual([false, true, true, true, true, true]);
    expect(readdirSync(dir).sort()).toEqual(['manifest.csv', 'manifest.jsonl']);
  });

  it("keeps the rows it is told to keep as they are, around the job's rows, and reads them under its lock", () => {
    const dir = tempDir('manifest');
    const other = { ...first, job: 'other', runId: 'other-run', current: false };
    const later = { ...video, job: 'other', runId: 'other-run' };
    ManifestWriter.replace(dir, () => ({ before: [other], own: () => [], after: [later] }));
    let seen: (ManifestRow | undefined)[] = [];
    ManifestWriter.replace(
      dir,
      (onDisk) => {
        seen = onDisk();
        // The lock is held: another writer of the folder would wait here.
        expect(existsSync(path.join(dir, MANIFEST_LOCK))).toBe(true);
        return { before: [seen[0]!], own: () => [{ ...first, job: 'mine' }], after: [seen[1]!] };
      },
      { described: { has: () => false } },
    );
    const rows = readManifest(dir);
    expect(rows.map((r) => r.job)).toEqual(['other', 'mine', 'other']);
    // Kept rows are not judged by this job's rule (it would retire them).
    expect(rows[0]).toEqual(other);
    expect(rows[2]?.current).toBe(later.current);
    expect(rows[1]?.currentReason).toBe('removed from the job');
    expect(existsSync(path.join(dir, MANIFEST_LOCK))).toBe(false);
  });

  it('reads the rows the rebuild writes anew only for their place, not validated', () => {
    const dir = tempDir('manifest');
    const other = { ...first, job: 'other', runId: 'other-run' };
    const mine = { ...first, job: 'mine', runId: 'mine-run' };
    ManifestWriter.replace(dir, () => ({ before: [other], own: () => [mine], after: [] }));
    // A row of the rebuilt run that would not validate still holds its place.
    appendFileSync(path.join(dir, 'manifest.jsonl'), `${JSON.stringify({ runId: 'mine-run' })}\n`);
    let seen: (ManifestRow | undefined)[] = [];
    ManifestWriter.replace(dir, (onDisk) => {
      seen = onDisk((row) => row.runId === 'mine-run');
      return { before: [], own: () => [], after: [] };
    });
    expect(seen).toEqual([other, undefined, undefined]);
  });
  it('an append after another writer replaced the files keeps its rows (two processes on one folder)', () => {
    const dir = tempDir('manifest');
    const mine = ManifestWriter.open(dir);
    mine.append({ ...first, runId: 'a' });
    // Another process rewrites the folder (a new template column): new files.
    const theirs = ManifestWriter.open(dir);
    theirs.append({ ...video, runId: 'b', vars: { product: 'scarf' } });
    theirs.close();
    mine.append({ ...failed, runId: 'a' });
    mine.close();
    expect(readManifest(dir).map((r) => r.runId)).toEqual(['a', 'b', 'a']);
    const csv = parseCsv(readFileSync(path.join(dir, 'manifest.csv'), 'utf8'));
    expect(csv.records.map((r) => csv.cell(r, 'runId'))).toEqual(['a', 'b', 'a']);
    expect(csv.records.map((r) => csv.cell(r, 'product'))).toEqual(['', 'scarf', '']);
  });

  it('a torn last line of another process does not swallow the next row', () => {
    const dir = tempDir('manifest');
    const writer = ManifestWriter.open(dir);
    writer.append({ ...first, runId: 'a' });
    appendFileSync(path.join(dir, 'manifest.jsonl'), '{"runId":"killed mid-li');
    writer.append({ ...failed, runId: 'a' });
    writer.close();
    expect(readManifest(dir).map((r) => r.item)).toEqual([first.item, failed.item]);
  });
});

describe('summarizeCosts', () => {
  it('counts each generation once and refunds separately', () => {
    const summary = summarizeCosts(FIXTURE_ROWS, [{ id: 'ava', creditsCost: 100, refunded: true }]);
    expect(summary.total).toEqual({
      charged: FIXTURE_TOTALS.charged + 100,
      refunded: FIXTURE_TOTALS.refunded + 100,
      net: FIXTURE_TOTALS.net,
      outputs: 3,
      failures: 2,
    });
    expect(summary.steps.map((s) => [s.step, s.net])).toEqual([
      ['training:ava', 0],
      ['portraits', 8],
      ['clips', 51],
    ]);
  });
});
