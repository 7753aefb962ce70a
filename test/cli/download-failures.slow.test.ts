/**
 * An output URL no download can ever succeed from (another
 * scheme, a redirect to another origin, an HTML page, HTML bytes declared
 * `image/png`) fails its item for good: exit 1 (not 4, "run again to
 * resume"), the manifest lists the output with its URL and the real reason,
 * and the next `run` against a well-behaved service makes that item again
 * (one more charge) while the done item is neither created nor charged.
 * Real `ibatch run` (in-process CLI) against a real emulator over loopback.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OutputUrlStyle } from '../../src/emulator/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { runCliCaptured, said, testEmulator } from '../helpers/index.js';
import { charges, envFor, imageJob, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

/** `s2` of the item key `s2-<hash>`. */
const scene = (item: string) => item.split('-')[0];

const CASES: Array<[OutputUrlStyle, RegExp]> = [
  ['data', /refused to download data:image\/png.*scheme data: is not http: or https:/],
  ['ftp', /refused to download ftp:\/\/.*scheme ftp: is not http: or https:/],
  ['file', /refused to download file:\/\/\/.*scheme file: is not http: or https:/],
  ['javascript', /refused to download javascript:.*scheme javascript: is not http: or https:/],
  ['cross-origin-redirect', /refused redirect of .* to another origin/],
  ['html-body', /is text\/html; charset=utf-8, not an image, video or audio file/],
  ['not-media', /is declared image\/png, but its bytes are no image, video or audio file/],
];

describe('downloads that can never succeed fail for good', () => {
  for (const [style, reason] of CASES) {
    it(`${style}: exit 1 with the reason in the manifest; the next run makes only that item`, async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(imageJob({ name: `dl-${style}`, n: 1 }));
      const env = envFor(em, SCALE);
      const out = path.join(ws.dir, 'out');

      // s1 is made while the service behaves: done.
      const first = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(first.code, said(first)).toBe(0);

      // s2 is made while its output URL can never be downloaded.
      await em.admin.setBehaviour({ outputUrlStyle: style });
      ws.write(imageJob({ name: `dl-${style}`, n: 2 }));
      const bad = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(bad.code, said(bad)).toBe(1);
      expect(said(bad)).not.toMatch(/failed \(network\)|run again to resume/i);
      const rows = readManifest(out).filter((row) => scene(row.item) === 's2');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 'failed', creditsCost: 2 });
      expect(rows[0]?.file).toBeUndefined();
      expect(rows[0]?.url).toBeTruthy();
      expect(rows[0]?.error).toMatch(reason);
      // The report lists it among the failures, with the reason.
      const report = readFileSync(path.join(out, 'report.html'), 'utf8');
      const failures = report.slice(report.indexOf('<table class="failures">'));
      // Titled by its label, the item key in the tooltip.
      expect(failures).toContain(`title="${rows[0]?.item}"`);
      expect(failures).toContain(' #1</td>');
      expect(failures).toContain(rows[0]?.error?.slice(0, 30));
      // Nothing but s1's file (and its provenance sidecar) was saved (no `.png` holding HTML).
      expect(readdirSync(path.join(out, 'shots')).sort()).toEqual(['s1-1.png', 's1-1.png.json']);

      // Against a well-behaved service: s2 is made again, s1 is not touched.
      await em.admin.setBehaviour({ outputUrlStyle: 'plain' });
      const again = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(again.code, said(again)).toBe(0);
      // Keys are ib1-<job>-<run>-shots-<scene>-<hash>-a<n>-<hash>.
      const scenes = (await charges(em)).map(
        (e) => /-shots-(s\d)-/.exec(e.idempotencyKey ?? '')?.[1],
      );
      expect(scenes.sort()).toEqual(['s1', 's2', 's2']);
      const current = readManifest(out).filter((row) => row.current);
      expect(current.map((row) => [scene(row.item), row.status]).sort()).toEqual([
        ['s1', 'succeeded'],
        ['s2', 'succeeded'],
      ]);
      for (const row of current) expect(existsSync(path.join(out, row.file ?? ''))).toBe(true);
    }, 60_000);
  }
});
