import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  REPORT_FILE,
  ReportWriter,
  renderReport,
  reportFileOf,
  writeReport,
} from '../../src/outputs/index.js';
import { tempDir } from '../helpers/index.js';
import { fixtureReport, HOSTILE_PROMPT } from './fixtures/report-data.js';
import { FIXTURE_ROWS, FIXTURE_TOTALS } from './fixtures/rows.js';

describe('renderReport', () => {
  const page = renderReport(fixtureReport());

  it('is self-contained: no external URL is loaded', () => {
    expect(page).not.toMatch(/<(link|script)[^>]+(href|src)=/i);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//i);
    expect(page).toContain('Content-Security-Policy');
  });

  it('escapes every hostile string', () => {
    expect(page).not.toContain(HOSTILE_PROMPT);
    expect(page).not.toContain('<script>window.__pwned');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;');
    expect(page.match(/<script>/g)).toHaveLength(1);
  });

  it('shows totals, per-step costs, failures and media by relative, encoded path', () => {
    expect(page).toContain(`data-total="charged">${FIXTURE_TOTALS.charged}<`);
    expect(page).toContain(`data-total="net">${FIXTURE_TOTALS.net}<`);
    expect(page).toContain('src="portraits/scene%3Dbeach-1.png"');
    expect(page).toContain(
      '<video controls preload="metadata" src="clips/portraits_scene%3Dbeach-1-1.mp4">',
    );
    expect(page).toContain('safety-blocked: no output');
    expect(page).toContain('rate limited: waiting 3 s');
  });

  it('never links a file path that leaves the folder', () => {
    const data = fixtureReport();
    const [row] = data.rows;
    data.rows = [
      { ...row!, file: '../../etc/passwd' },
      { ...row!, n: 5, file: '%2e%2e/x.png' },
    ];
    const html = renderReport(data);
    expect(html).not.toContain('etc/passwd"');
    expect(html).toContain('file not shown: unsafe path');
    expect(html).toContain('src="%252e%252e/x.png"');
  });

  it('rejects malformed data', () => {
    expect(() => renderReport({ run: { runId: 'r' } } as never)).toThrow();
  });
});

describe('writeReport', () => {
  it('writes report.html atomically (no temp file left)', () => {
    const dir = tempDir('report');
    const file = writeReport(dir, fixtureReport());
    expect(file).toBe(path.join(dir, REPORT_FILE));
    expect(readFileSync(file, 'utf8')).toContain('<!doctype html>');
    expect(readdirSync(dir)).toEqual([REPORT_FILE]);
  });
});

describe('the reports of two jobs sharing a folder', () => {
  /** More rows than a document holds inline: the rest goes to page files. */
  function longReport(job: string) {
    const base = FIXTURE_ROWS.find((r) => r.kind === 'image' && r.file);
    if (!base) throw new Error('the fixture has no image row');
    const rows = Array.from({ length: 700 }, (_, i) => ({
      ...base,
      job,
      item: `${job}-${i + 1}`,
      generationId: `${job}-g-${i + 1}`,
    }));
    return { ...fixtureReport(), rows };
  }
  const pages = (dir: string) => readdirSync(path.join(dir, 'report-data')).sort();

  it('keep their page files apart: a rewrite of one removes only its own older pages', () => {
    const dir = tempDir('report-shared');
    expect(reportFileOf('ja', true)).toBe(REPORT_FILE);
    expect(reportFileOf('jb', false)).toBe('report-jb.html');
    writeReport(dir, longReport('ja'));
    const ja = pages(dir);
    expect(ja.length).toBeGreaterThan(0);
    new ReportWriter(dir, longReport('jb'), reportFileOf('jb', false)).finish();
    const both = pages(dir);
    const jb = both.filter((name) => name.startsWith('report-jb.'));
    expect(jb.length).toBeGreaterThan(0);
    expect(both.filter((name) => !jb.includes(name))).toEqual(ja);
    // The document loads its own pages by these names.
    const jbDoc = readFileSync(path.join(dir, 'report-jb.html'), 'utf8');
    for (const name of jb) expect(jbDoc).toContain(name);

    new ReportWriter(dir, longReport('jb'), reportFileOf('jb', false)).finish();
    const again = pages(dir);
    expect(again.filter((name) => !name.startsWith('report-jb.'))).toEqual(ja);
    expect(again.filter((name) => name.startsWith('report-jb.'))).not.toEqual(jb);
    writeReport(dir, longReport('ja'));
    expect(pages(dir).filter((name) => name.startsWith('report-jb.'))).toEqual(
      again.filter((name) => name.startsWith('report-jb.')),
    );
  });
});
