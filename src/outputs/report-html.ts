/**
 * `report.html`: a self-contained gallery of a run. Inline CSS and JS only
 * (pinned by a Content-Security-Policy with their hashes, so even a markup
 * injection could not run a script); media are referenced by their relative
 * paths in the output folder. Every value from the job, the service or the
 * journal is HTML-escaped.
 *
 * For people, not for the engine: cards are titled by the item's values
 * (`beach · silk scarf`, the key in small print), a clip links the image it
 * was made from, times are shown in the reader's time zone (the page's
 * script formats each `<time datetime>` with `Intl.DateTimeFormat`; without
 * it the UTC time stays), with the finish time and the duration, and every
 * amount reads `N credits`.
 *
 * A long run's lists are paged out of the document (report-pages.ts): it
 * stays a few hundred kB at 100,000 outputs.
 */
import path from 'node:path';
import { redactDeep, removeDeadWritersTemps } from '../shared/index.js';
import { CostTally } from './costs.js';
import { currentStateOf } from './current.js';
import { writeFileAtomicSync } from './fs-durable.js';
import { cspHash, html, type RawHtml, raw } from './html.js';
import { type ManifestRow, ManifestRowSchema } from './manifest-row.js';
import { REPORT_CSS, REPORT_JS } from './report-assets.js';
import { type ReportData, ReportDataSchema } from './report-data.js';
import {
  type PagedList,
  type PageSink,
  ReportPager,
  removeOldReportPages,
  reportPageWriter,
} from './report-pages.js';
import {
  costTable,
  durationText,
  failureRow,
  failureTable,
  fmt,
  notCurrentLine,
  tagLine,
  tile,
  timeline,
  timeTag,
  totalCards,
  trainingTable,
} from './report-parts.js';

export const REPORT_FILE = 'report.html';

/**
 * The report file of job `job` in its output folder: `report.html` when the
 * job is the folder's first (no other job's manifest rows come before its
 * own: a folder of one job always), `report-JOB.html` for every other job
 * sharing the folder. The order of the manifest's jobs is stable, so each
 * job keeps its file from run to run.
 */
export function reportFileOf(job: string, firstInFolder: boolean): string {
  return firstInFolder ? REPORT_FILE : `report-${job}.html`;
}

type Parsed = ReturnType<typeof ReportDataSchema.parse>;

/** The report document alone (its page files are left out). Throws a ZodError when `data` is malformed. */
export function renderReport(input: ReportData): string {
  return new ReportBuilder(input, () => {}).render().html;
}

/**
 * Renders and writes `report.html` into `outputDir` atomically, its page
 * files first (`report-data/`, when its lists are long) and the previous
 * render's after; returns its path.
 */
export function writeReport(outputDir: string, data: ReportData): string {
  return new ReportWriter(outputDir, data).finish();
}

/**
 * `writeReport` with rows handed over one by one after `data`'s (`add`), so
 * a run of 100,000 outputs is reported without its rows or their markup in
 * memory: full pages are written as they fill, the document by `finish`.
 */
export class ReportWriter {
  readonly #dir: string;
  readonly #builder: ReportBuilder;
  readonly #prefix: string;

  /** `file`: the report's name in `outputDir` (see reportFileOf). */
  constructor(
    outputDir: string,
    data: ReportData,
    readonly file: string = REPORT_FILE,
  ) {
    this.#dir = path.resolve(outputDir);
    // Page files of `report.html` keep the names they always had; another
    // job's report in the folder starts its own with its stem
    // (`report-JOB.`), so each report removes only its own earlier pages.
    this.#prefix = file === REPORT_FILE ? '' : `${path.basename(file, '.html')}.`;
    this.#builder = new ReportBuilder(data, reportPageWriter(this.#dir), this.#prefix);
  }

  /** One more manifest row (validated and redacted here). */
  add(row: ManifestRow): void {
    this.#builder.add(row);
  }

  /**
   * One more manifest row as the manifest writer checked it (validated and
   * redacted: `ManifestWriter.replace` hands each row it wrote to `onRow`),
   * not checked a second time.
   */
  addChecked(row: ManifestRow): void {
    this.#builder.addChecked(row);
  }

  /** Writes the document (atomically), then removes the page files of earlier renders. */
  finish(): string {
    const file = path.join(this.#dir, this.file);
    const report = this.#builder.render();
    removeDeadWritersTemps(file);
    writeFileAtomicSync(file, report.html);
    removeOldReportPages(this.#dir, report.pagesId, this.#prefix);
    return file;
  }
}

/** One render: rows go into its lists (and totals) as they come; `render` makes the document. */
class ReportBuilder {
  // Errors, event messages and statuses can quote the service: redacted before rendering.
  readonly #data: Parsed;
  readonly #pager: ReportPager;
  readonly #costs: CostTally;
  /** The gallery's list of each step, in the order the rows first name them. */
  readonly #galleries = new Map<string, PagedList>();
  readonly #failures: PagedList;
  /** The run's files that are no longer current, counted apart (src/outputs/current.ts). */
  readonly #notCurrent = { superseded: 0, retired: 0 };

  constructor(input: ReportData, sink: PageSink, pagePrefix = '') {
    this.#data = redactDeep(ReportDataSchema.parse(input));
    this.#pager = new ReportPager(sink, pagePrefix);
    this.#costs = new CostTally(this.#data.trainings);
    this.#failures = this.#pager.list('tbody', '');
    for (const row of this.#data.rows) this.#add(row);
  }

  add(row: ManifestRow): void {
    this.#add(redactDeep(ManifestRowSchema.parse(row)));
  }

  addChecked(row: ManifestRow): void {
    this.#add(row);
  }

  #add(row: ManifestRow): void {
    this.#costs.add(row);
    if (!row.file) {
      this.#failures.add(failureRow(row));
      return;
    }
    const state = currentStateOf(row);
    if (state !== 'current') this.#notCurrent[state] += 1;
    let list = this.#galleries.get(row.step);
    if (!list) {
      list = this.#pager.list('div', 'class="grid"');
      this.#galleries.set(row.step, list);
    }
    list.add(tile(row));
  }

  render(): { html: string; pagesId: string | undefined } {
    const data = this.#data;
    const pager = this.#pager;
    const costs = this.#costs.summary(data.spend);
    const { run } = data;
    const lists = html`<h2>Outputs</h2>
<div class="filters" role="toolbar">${['all', 'image', 'video'].map(
      (f) =>
        html`<button type="button" data-filter="${f}" aria-pressed="${f === 'all'}">${f}</button>`,
    )}</div>
${notCurrentLine(this.#notCurrent)}${this.#gallery()}
<h2>Failures</h2>${failureTable(this.#failures)}
<h2>Timeline</h2>${timeline(data.events, pager)}`;
    const paged = pager.paged;
    // The nonce lets the script add the page files (and nothing else can know it).
    const scripts = `'${cspHash(REPORT_JS)}'${paged ? ` 'nonce-${pager.nonce}'` : ''}`;
    const csp = [
      "default-src 'none'",
      "img-src 'self' file: data: blob:",
      "media-src 'self' file: blob:",
      `style-src '${cspHash(REPORT_CSS)}'`,
      `script-src ${scripts}`,
      "base-uri 'none'",
      "form-action 'none'",
    ].join('; ');
    const doc = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<title>${run.jobName} · ${run.runId} · ibatch report</title>
<style>${raw(REPORT_CSS)}</style></head>
<body><main>
<header><h1>${run.jobName}</h1>
<div class="meta"><span>run <code data-run-id>${run.runId}</code></span>
<span>started ${timeTag(run.startedAt)}</span>
${run.finishedAt ? html`<span>finished ${timeTag(run.finishedAt)}</span>` : ''}
${run.finishedAt ? html`<span>took <b data-duration>${durationText(run.startedAt, run.finishedAt)}</b></span>` : ''}
${run.status ? html`<span>status <b>${run.status}</b></span>` : ''}
${run.budget != null ? html`<span>budget ${fmt(run.budget)} credits</span>` : ''}</div>
${tagLine(run.tags ?? {}, data.jobSpend)}</header>
${totalCards(costs)}
<h2>Cost per step</h2>${costTable(costs)}
${data.trainings.length > 0 ? trainingTable(data.trainings) : ''}
${lists}
<footer>Generated by ibatch on ${timeTag(data.generatedAt ?? new Date().toISOString())}.</footer>
</main><script${paged ? html` nonce="${pager.nonce}"` : ''}>${raw(REPORT_JS)}</script></body></html>
`;
    return { html: doc.__html, pagesId: paged ? pager.id : undefined };
  }

  /** The output cards by step: the job's steps in order, then any other the rows name. */
  #gallery(): RawHtml {
    if (this.#galleries.size === 0) return html`<p class="empty">No output files.</p>`;
    const data = this.#data;
    const order = [...new Set([...data.steps.map((s) => s.id), ...this.#galleries.keys()])];
    const labels = new Map(data.steps.map((s) => [s.id, s.modelLabel ?? s.modelId]));
    return html`${order.map((step) => {
      const rows = this.#galleries.get(step);
      if (!rows) return '';
      const { list, more } = rows.close();
      return html`<section class="step" data-step="${step}"><h3>${step}${
        labels.get(step) ? html` · ${labels.get(step)}` : ''
      }</h3>${list}${more}</section>`;
    })}`;
  }
}
