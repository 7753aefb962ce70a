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
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { makeFolderSync } from '../shared/index.js';
import { FileWriterSync } from './fs-durable.js';
import { html, type RawHtml, raw } from './html.js';

export const REPORT_DATA_DIR = 'report-data';
/** Rows of each list in the document itself (what the first screens show). */
const INLINE_ROWS = 200;
/** Rows per page file: a few hundred kB, inserted in a few tens of ms. */
const PAGE_ROWS = 500;
const PAGE_FILE = /^([0-9a-f]{12})-\d{4,}\.js$/;

/**
 * Receives each page file as soon as it is full: its name (inside
 * `report-data/`) and its text, in pieces to be written one after another.
 */
export type PageSink = (name: string, text: readonly string[]) => void;

/**
 * Splits the lists of one render into inline rows and page files, a list
 * filled row by row (`list(...).add`): a full page goes to the sink at once,
 * so a render holds at most a page of each list.
 */
export class ReportPager {
  /** Names this render's files, so a rewrite never mixes with an older one. */
  readonly id = randomBytes(6).toString('hex');
  readonly nonce = randomBytes(16).toString('base64');

  #pages = 0;
  #lists = 0;

  /** `prefix`: starts every page file's name, telling apart the reports of one folder (ReportWriter). */
  constructor(
    private readonly sink: PageSink,
    private readonly prefix = '',
  ) {}

  /** Whether this render wrote page files. */
  get paged(): boolean {
    return this.#pages > 0;
  }

  /**
   * A list element (`tag` with `attrs`) whose first rows are inline and the
   * rest in page files; `close` gives the element, carrying the names of its
   * pages and its length, and `more`, its button placed after it (after its
   * table for a `tbody`), which loads the next page.
   */
  list(tag: 'div' | 'tbody' | 'ol', attrs: string): PagedList {
    return new PagedList(tag, attrs, {
      page: (rows) => {
        this.#pages += 1;
        const name = `${this.prefix}${this.id}-${String(this.#pages).padStart(4, '0')}.js`;
        // JSON text is a JS string literal (U+2028/9 too, since ES2019); the
        // markup's literal is its rows' literals, quotes off, one after another.
        const literals = rows.map((row) => JSON.stringify(row).slice(1, -1));
        this.sink(name, [`ibatchReportPage(${JSON.stringify(name)},"`, ...literals, '");\n']);
        return name;
      },
      number: () => {
        this.#lists += 1;
        return String(this.#lists);
      },
    });
  }
}

/** One list of a render; see ReportPager.list. */
export class PagedList {
  readonly #inline: string[] = [];
  #page: string[] = [];
  readonly #names: string[] = [];
  #rows = 0;

  constructor(
    private readonly tag: string,
    private readonly attrs: string,
    private readonly pager: { page(rows: readonly string[]): string; number(): string },
  ) {}

  get length(): number {
    return this.#rows;
  }

  add(row: RawHtml): void {
    this.#rows += 1;
    if (this.#inline.length < INLINE_ROWS) {
      this.#inline.push(row.__html);
      return;
    }
    this.#page.push(row.__html);
    if (this.#page.length >= PAGE_ROWS) this.#flush();
  }

  close(): { list: RawHtml; more: RawHtml | '' } {
    this.#flush();
    const open = raw(`<${this.tag}${this.attrs ? ` ${this.attrs}` : ''}`);
    const inline = raw(this.#inline.join(''));
    const close = raw(`</${this.tag}>`);
    if (this.#names.length === 0) return { list: html`${open}>${inline}${close}`, more: '' };
    const n = this.pager.number();
    return {
      list: html`${open} data-list="${n}" data-pages="${this.#names.join(' ')}" data-rows="${this.#rows}">${inline}${close}`,
      more: html`<button type="button" class="more" data-more="${n}">show more</button>`,
    };
  }

  #flush(): void {
    if (this.#page.length === 0) return;
    this.#names.push(this.pager.page(this.#page));
    this.#page = [];
  }
}

/**
 * A sink writing page files into `outputDir`'s `report-data/` (created with
 * the first). Not fsynced one by one: they are rebuilt by `ibatch report`
 * from the journal, and the document naming them is written (atomically)
 * after.
 */
export function reportPageWriter(outputDir: string): PageSink {
  const dir = path.join(outputDir, REPORT_DATA_DIR);
  let made = false;
  return (name, text) => {
    if (!made) makeFolderSync(dir);
    made = true;
    const file = new FileWriterSync(path.join(dir, name), 'w');
    for (const piece of text) file.write(piece);
    file.close();
  };
}

/**
 * After the document is in place: removes the page files of earlier renders
 * of the same report (only ours: those whose names start with `prefix`).
 */
export function removeOldReportPages(
  outputDir: string,
  keepId: string | undefined,
  prefix = '',
): void {
  const dir = path.join(outputDir, REPORT_DATA_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const id = PAGE_FILE.exec(name.slice(prefix.length))?.[1];
    if (id !== undefined && id !== keepId) rmSync(path.join(dir, name), { force: true });
  }
  if (keepId === undefined && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}
