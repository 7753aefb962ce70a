/**
 * The long lists of `report.html` (cards, failures, timeline) paged out of
 * the document, so a run of 100,000 outputs opens at once: the document holds
 * the summary and the first rows of each list, the rest lives in
 * `report-data/<id>-0001.js`… next to it, loaded when the reader scrolls near
 * the end of a list.
 *
 * Why scripts: the report is opened from disk, and a `file:` page may not
 * `fetch` or read a frame of another `file:` document, but it may run a
 * classic script. Each page file is one call, `ibatchReportPage(name, markup)`,
 * with markup rendered and escaped by the same code as the inline rows. The
 * report's script adds these scripts with the document's CSP nonce (fresh per
 * render): a hash cannot allow them (Chromium checks a script's hash only
 * through `integrity`, which it refuses on `file:`), and `'self'`/`file:`
 * would allow any file on the disk.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { html, type RawHtml, raw } from './html.js';

export const REPORT_DATA_DIR = 'report-data';
/** Rows of each list in the document itself (what the first screens show). */
const INLINE_ROWS = 200;
/** Rows per page file: a few hundred kB, inserted in a few tens of ms. */
const PAGE_ROWS = 500;
const PAGE_FILE = /^([0-9a-f]{12})-\d{4,}\.js$/;

export interface ReportPage {
  /** File name inside `report-data/`. */
  readonly name: string;
  readonly text: string;
}

/** Splits the lists of one render into inline rows and page files. */
export class ReportPager {
  /** Names this render's files, so a rewrite never mixes with an older one. */
  readonly id = randomBytes(6).toString('hex');
  readonly nonce = randomBytes(16).toString('base64');
  readonly pages: ReportPage[] = [];

  #lists = 0;

  /**
   * The first rows of a list, inline; the rest as page files. The list
   * element (`tag` with `attrs`) carries the names of its pages and its
   * length, and `more`, its button placed after it (after its table for a
   * `tbody`), loads the next page.
   */
  list(
    tag: 'div' | 'tbody' | 'ol',
    attrs: string,
    rows: readonly RawHtml[],
  ): { list: RawHtml; more: RawHtml | '' } {
    const names: string[] = [];
    for (let from = INLINE_ROWS; from < rows.length; from += PAGE_ROWS) {
      const name = `${this.id}-${String(this.pages.length + 1).padStart(4, '0')}.js`;
      const markup = joined(rows.slice(from, from + PAGE_ROWS));
      // JSON text is a JS string literal (U+2028/9 too, since ES2019).
      const text = `ibatchReportPage(${JSON.stringify(name)},${JSON.stringify(markup)});\n`;
      this.pages.push({ name, text });
      names.push(name);
    }
    const open = raw(`<${tag}${attrs ? ` ${attrs}` : ''}`);
    const inline = raw(joined(rows.slice(0, INLINE_ROWS)));
    const close = raw(`</${tag}>`);
    if (names.length === 0) return { list: html`${open}>${inline}${close}`, more: '' };
    this.#lists += 1;
    const n = String(this.#lists);
    return {
      list: html`${open} data-list="${n}" data-pages="${names.join(' ')}" data-rows="${rows.length}">${inline}${close}`,
      more: html`<button type="button" class="more" data-more="${n}">show more</button>`,
    };
  }
}

const joined = (rows: readonly RawHtml[]): string => rows.map((r) => r.__html).join('');

/**
 * Writes the page files of a render (before the document that names them),
 * or removes the folder when it has none.
 */
export function writeReportPages(outputDir: string, pages: readonly ReportPage[]): void {
  if (pages.length === 0) return;
  const dir = path.join(outputDir, REPORT_DATA_DIR);
  mkdirSync(dir, { recursive: true });
  // Not fsynced one by one: they are rebuilt by `ibatch report` from the
  // journal, and the document naming them is written (atomically) after.
  for (const page of pages) writeFileSync(path.join(dir, page.name), page.text);
}

/** After the document is in place: removes the page files of earlier renders (only ours). */
export function removeOldReportPages(outputDir: string, keepId: string | undefined): void {
  const dir = path.join(outputDir, REPORT_DATA_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const id = PAGE_FILE.exec(name)?.[1];
    if (id !== undefined && id !== keepId) rmSync(path.join(dir, name), { force: true });
  }
  if (keepId === undefined && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}
