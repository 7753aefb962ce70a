/**
 * What a person opens after a run, on the emulator through
 * the CLI: a CSV job whose columns are not in alphabetical order and whose
 * values carry accents, another script, a duplicate row and a value that
 * tries to climb out of the folder; two copies per image and a `from:` clip
 * of each. File names read like the item (values in job order, accents kept,
 * no hash unless two items share a name), clips are named after their image,
 * every file stays inside the folder; `manifest.csv`, read with an
 * independent RFC 4180 parser, starts with a BOM, has `file` first, then one
 * column per template variable in job order, round-trips `café`, and fills
 * every documented column of a succeeded row.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../src/outputs/index.js';
import { emulatorEnv, parseCsv, tempDir } from '../helpers/index.js';
import { emulators, runJobCli, walk } from './fixtures/pipeline/helpers.js';

const JOB = `version: 1
name: readable
output: out
generations:
  - id: hero
    model: flux-portrait
    copies: 2
    rows: rows.csv
    input:
      prompt: "{{ caption }} — {{ scene }}, with a {{ product }}"
  - id: reels
    model: kling-i2v
    from: hero
    input:
      prompt: "slow dolly in"
      duration: 5
`;

// Job order caption, scene, product (alphabetical: caption, product, scene).
const ROWS = [
  'caption,scene,product',
  'Bonjour Paris,à Paris café,silk scarf',
  'Bonjour Paris,à Paris café,silk scarf',
  'Konnichiwa,東京 night,tote bag',
  '../../x,..,/etc/passwd',
].join('\n');

/**
 * Columns a succeeded row may leave empty: `error` (failures only),
 * `sourceFile` (outputs of a `from:` step only).
 */
/** Empty on a succeeded row: no error, no source (not a `from:` item), current, not reviewed yet. */
const EMPTY_ON_SUCCESS = new Set([
  'error',
  'currentReason',
  'sourceFile',
  'review',
  'reviewer',
  'reviewedAt',
  'note',
]);

describe('readable outputs', () => {
  it('names files after the item and writes a spreadsheet-ready manifest.csv', async () => {
    const em = await emulators({ seed: 14 });
    const dir = tempDir('readable');
    const job = path.join(dir, 'job.yaml');
    writeFileSync(job, JOB);
    writeFileSync(path.join(dir, 'rows.csv'), `${ROWS}\n`);
    const before = walk(dir);

    const result = await runJobCli(job, emulatorEnv(em));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const out = path.join(dir, 'out');

    // Nothing outside out/ and the journal.
    const added = walk(dir).filter((f) => !before.includes(f));
    expect(added.filter((f) => !f.startsWith('out/') && !f.startsWith('.ibatch/'))).toEqual([]);

    const rows = readManifest(out);
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    const files = rows.map((r) => r.file ?? '');
    for (const file of files) expect(existsSync(path.join(out, file)), file).toBe(true);
    expect(new Set(files).size).toBe(files.length);
    const hero = files.filter((f) => f.startsWith('hero/')).sort();
    // Values in job order, accents and other scripts kept, no hash for a unique name.
    expect(hero).toContain('hero/bonjour-paris-à-paris-café-silk-scarf-1.png');
    expect(hero).toContain('hero/bonjour-paris-à-paris-café-silk-scarf-2.png');
    expect(hero).toContain('hero/konnichiwa-東京-night-tote-bag-1.png');
    expect(hero).toContain('hero/x-etc-passwd-1.png');
    // The duplicate row's files: the same name made unique by a short suffix.
    const duplicate = hero.filter((f) =>
      /^hero\/bonjour-paris-à-paris-café-silk-scarf-[12]-[0-9a-f]{8}\.png$/.test(f),
    );
    expect(duplicate).toHaveLength(2);
    expect(hero).toHaveLength(8);
    // Clips: named after their image and which of its copies they animate.
    const reels = files.filter((f) => f.startsWith('reels/'));
    expect(reels).toHaveLength(8);
    expect(reels).toContain('reels/konnichiwa-東京-night-tote-bag-from-1-1.mp4');
    expect(reels).toContain('reels/konnichiwa-東京-night-tote-bag-from-2-1.mp4');
    for (const reel of rows.filter((r) => r.step === 'reels')) {
      expect(reel.sourceFile, reel.file).toMatch(/^hero\/.+\.png$/);
      const stem = (reel.sourceFile ?? '').replace(/^hero\/(.+)-(\d)(-[0-9a-f]{8})?\.png$/, '$1');
      expect(reel.file?.startsWith(`reels/${stem}-from-`), reel.file).toBe(true);
    }

    // manifest.csv through an RFC 4180 parser.
    const bytes = readFileSync(path.join(out, 'manifest.csv'));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const csv = parseCsv(bytes.toString('utf8'));
    expect(csv.bom).toBe(true);
    expect(csv.header.slice(0, 4)).toEqual(['file', 'caption', 'scene', 'product']);
    const { records, cell } = csv;
    expect(records).toHaveLength(rows.length);
    const cafe = records.filter((r) => cell(r, 'scene') === 'à Paris café');
    expect(cafe.length).toBe(8); // 2 rows x 2 copies, and their clips
    expect(records.some((r) => cell(r, 'scene') === '東京 night')).toBe(true);

    // Every documented column of a succeeded row is filled.
    const documented = csv.header.filter((name) => !EMPTY_ON_SUCCESS.has(name));
    for (const record of records) {
      for (const name of documented)
        expect(cell(record, name), `${record[0]}: ${name}`).not.toBe('');
      expect(Number.isNaN(Date.parse(cell(record, 'at') ?? ''))).toBe(false);
    }
    for (const record of records.filter((r) => r[0]?.startsWith('reels/')))
      expect(cell(record, 'sourceFile')).toMatch(/^hero\//);

    // creditsCost is the generation's own charge: the rows sum to the ledger's charges.
    const ledger = (await em.admin.ledger(em.accounts[0]?.id ?? '')).filter(
      (e) => e.type === 'charge',
    );
    const charged = ledger.reduce((sum, e) => sum + e.amount, 0);
    const perGeneration = new Map(rows.map((r) => [r.generationId, r.creditsCost ?? 0]));
    expect([...perGeneration.values()].reduce((a, b) => a + b, 0)).toBe(charged);
    expect(
      records.filter((r) => r[0]?.startsWith('hero/')).map((r) => cell(r, 'creditsCost')),
    ).toEqual(Array(8).fill('4'));
  }, 120_000);
});
