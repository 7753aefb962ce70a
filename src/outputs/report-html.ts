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
import { redactDeep } from '../shared/index.js';
import { type CostSummary, CostTally } from './costs.js';
import { currentStateOf } from './current.js';
import { writeFileAtomicSync } from './fs-durable.js';
import { cspHash, html, localHref, type RawHtml, raw } from './html.js';
import { type ManifestRow, ManifestRowSchema } from './manifest-row.js';
import { REPORT_CSS, REPORT_JS } from './report-assets.js';
import {
  type ReportData,
  ReportDataSchema,
  type ReportEvent,
  type ReportTraining,
} from './report-data.js';
import {
  type PagedList,
  type PageSink,
  ReportPager,
  removeOldReportPages,
  reportPageWriter,
} from './report-pages.js';

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

/** How many of the run's files are no longer current, superseded and retired apart. */
function notCurrentLine(counts: { superseded: number; retired: number }): RawHtml | string {
  if (counts.superseded + counts.retired === 0) return '';
  return html`<p class="empty" data-not-current>Not current: <b data-superseded>${fmt(counts.superseded)}</b> superseded by a newer run, <b data-retired>${fmt(counts.retired)}</b> removed from the job.</p>`;
}

function totalCards(costs: CostSummary): RawHtml {
  const t = costs.total;
  const card = (name: string, value: number, label: string) =>
    html`<div class="stat"><b data-total="${name}">${fmt(value)}</b><span>${label}</span></div>`;
  return html`<section class="cards">${card('charged', t.charged, 'credits charged')}${card(
    'refunded',
    t.refunded,
    'credits refunded',
  )}${card('net', t.net, 'net credits spent')}${card('outputs', t.outputs, 'output files')}${card(
    'failures',
    t.failures,
    'failed items',
  )}</section>`;
}

/** The job's tags and what all its runs spent (what `ibatch costs` bills). */
function tagLine(
  tags: Readonly<Record<string, string>>,
  jobSpend: ReportData['jobSpend'],
): RawHtml | '' {
  const names = Object.keys(tags);
  if (names.length === 0 && !jobSpend) return '';
  return html`<div class="meta" data-job-costs>${names.map(
    (name) => html`<span class="badge" data-tag="${name}">${name}: ${tags[name] ?? ''}</span>`,
  )}${
    jobSpend
      ? html`<span>all runs of this job on this service: <b data-job-net>${credits(jobSpend.net)}</b> net (<span data-job-charged>${credits(
          jobSpend.charged,
        )}</span> charged, <span data-job-refunded>${credits(jobSpend.refunded)}</span> refunded)${
          jobSpend.remaining === undefined || jobSpend.remaining === null
            ? ''
            : html`; <span data-job-remaining>${credits(jobSpend.remaining)}</span> of the budget left`
        }</span>`
      : ''
  }</div>`;
}

function costTable(costs: CostSummary): RawHtml {
  if (costs.steps.length === 0) return html`<p class="empty">Nothing was charged.</p>`;
  const rows = costs.steps.map(
    (s) => html`<tr data-step="${s.step}"><td>${s.step}</td><td class="num">${s.outputs}</td>
<td class="num">${s.failures}</td><td class="num">${credits(s.charged)}</td><td class="num">${credits(s.refunded)}</td>
<td class="num">${credits(s.net)}</td></tr>`,
  );
  const t = costs.total;
  return html`<table class="costs"><thead><tr><th>step</th><th class="num">outputs</th><th class="num">failed</th>
<th class="num">charged</th><th class="num">refunded</th><th class="num">net</th></tr></thead><tbody>${rows}</tbody>
<tfoot><tr><td>total</td><td class="num">${t.outputs}</td><td class="num">${t.failures}</td><td class="num">${credits(t.charged)}</td>
<td class="num">${credits(t.refunded)}</td><td class="num">${credits(t.net)}</td></tr></tfoot></table>`;
}

function trainingTable(trainings: readonly ReportTraining[]): RawHtml {
  const rows = trainings.map(
    (t) => html`<tr><td>${t.id}</td><td>${t.name}</td><td>${statusBadge(t.status)}</td>
<td class="mono">${t.influencerId ?? ''}</td><td class="num">${credits(t.creditsCost ?? 0)}</td>
<td>${t.refunded ? 'yes' : 'no'}</td><td>${t.error ?? ''}</td></tr>`,
  );
  return html`<h2>Influencer training</h2><table><thead><tr><th>id</th><th>name</th><th>status</th>
<th>influencer</th><th class="num">cost</th><th>refunded</th><th>error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function tile(row: ManifestRow): RawHtml {
  const href = localHref(row.file);
  const isVideo = row.kind === 'video' || row.contentType?.startsWith('video/');
  const isAudio = row.contentType?.startsWith('audio/');
  const title = titleOf(row);
  const alt = `${title} #${row.n ?? 1}`;
  let media: RawHtml;
  if (!href) media = html`<div class="thumb missing">file not shown: unsafe path</div>`;
  else if (isVideo) {
    media = html`<div class="thumb"><video controls preload="metadata" src="${href}"></video></div>`;
  } else if (isAudio)
    media = html`<div class="thumb missing"><audio controls src="${href}"></audio></div>`;
  else {
    media = html`<a class="thumb" href="${href}"><img loading="lazy" decoding="async" src="${href}" alt="${alt}"></a>`;
  }
  return html`<article class="tile" data-kind="${isVideo ? 'video' : 'image'}" data-status="${row.status}" data-review="${row.review ?? ''}">${media}
<div class="body"><div><b class="title" title="${row.item}">${title}</b>${row.n ? html` <span class="badge">#${row.n}</span>` : ''}${reviewBadge(row)}${
    row.current === false
      ? html` <span class="badge" data-current-reason>${row.currentReason ?? 'not current'}</span>`
      : ''
  }</div>
${sourceLink(row.sourceFile)}
${row.prompt ? html`<div class="prompt" title="${row.prompt}">${row.prompt}</div>` : ''}
<div class="foot"><span>${row.modelId}</span><span data-credits>${credits(row.creditsCost ?? 0)}</span></div>
<div class="foot mono"><span title="${row.sha256 ?? ''}">${(row.sha256 ?? '').slice(0, 12)}</span><span>${
    row.file ?? ''
  }</span></div></div></article>`;
}

/** The review decision of a card: approved / rejected, who and the note on hover; nothing when unreviewed. */
function reviewBadge(row: ManifestRow): RawHtml | string {
  if (!row.review) return '';
  const tone = row.review === 'approved' ? 'ok' : 'bad';
  const says = [row.reviewer, row.reviewedAt, row.note].filter(Boolean).join(' · ');
  return html` <span class="badge ${tone}" data-review-badge title="${says}">${row.review}</span>`;
}

function failureRow(r: ManifestRow): RawHtml {
  return html`<tr class="tile-failed" data-status="failed" data-generation-id="${r.generationId ?? ''}"><td>${r.step}</td>
<td title="${r.item}">${titleOf(r)}${r.n === undefined ? '' : ` #${r.n}`}</td><td>${r.modelId}</td>
<td>${statusBadge(r.status)}</td><td>${r.error ?? ''}</td><td class="num">${credits(r.creditsCost ?? 0)}</td>
<td>${r.refunded ? 'yes' : 'no'}</td></tr>`;
}

function failureTable(failed: PagedList): RawHtml {
  if (failed.length === 0) return html`<p class="empty">No failures.</p>`;
  const { list, more } = failed.close();
  return html`<table class="failures"><thead><tr><th>step</th><th>item</th><th>model</th><th>status</th>
<th>reason</th><th class="num">cost</th><th>refunded</th></tr></thead>${list}</table>${more}`;
}

function timeline(events: readonly ReportEvent[], pager: ReportPager): RawHtml {
  if (events.length === 0) return html`<p class="empty">No events recorded.</p>`;
  const list = pager.list('ol', 'class="timeline"');
  for (const e of events) {
    list.add(
      html`<li class="${e.level}">${timeTag(e.at, 'time')}${e.step ? html`<b>${e.step}</b> ` : ''}${e.message}</li>`,
    );
  }
  const { list: element, more } = list.close();
  return html`${element}${more}`;
}

function statusBadge(status: string): RawHtml {
  const tone = /succe|ready|ok/i.test(status)
    ? 'ok'
    : /block|skip|pend|queue|process/i.test(status)
      ? 'warn'
      : 'bad';
  return html`<span class="badge ${tone}">${status}</span>`;
}

/** Credits with at most two decimals. */
function fmt(n: number): string {
  return String(Math.round(n * 100) / 100);
}

/** The one way the report writes an amount: `4 credits`, `1 credit`, `25.5 credits`. */
function credits(n: number): string {
  const shown = fmt(n);
  return `${shown} ${shown === '1' ? 'credit' : 'credits'}`;
}

/**
 * A card's title: the item's values in job order (`beach · silk scarf`), as
 * a person named them; the label of rows written before values were kept;
 * the key last.
 */
function titleOf(row: ManifestRow): string {
  const values = Object.values(row.vars ?? {}).filter((v) => v !== null && v !== '');
  if (values.length > 0) return values.map(String).join(' · ');
  return row.label ?? row.item;
}

/** The image a clip was made from: a small picture and its file, linked. */
function sourceLink(file: string | undefined): RawHtml | '' {
  const href = localHref(file);
  if (!file || !href) return '';
  return html`<a class="source" data-source href="${href}"><img class="source-thumb" loading="lazy" src="${href}" alt="source image ${file}"><span>from ${file}</span></a>`;
}

/**
 * A time as UTC ISO text, which the page's script rewrites in the reader's
 * time zone (`date`: day and time; `time`: time only, for the timeline).
 */
function timeTag(iso: string, style: 'date' | 'time' = 'date'): RawHtml {
  return html`<time datetime="${iso}" data-local="${style}" title="${iso}">${iso}</time>`;
}

/** `1 h 02 min`, `3 min 12 s`, `12 s`: how long the run took. */
function durationText(startedAt: string, finishedAt: string): string {
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  if (!Number.isFinite(ms) || ms < 0) return 'unknown';
  const s = Math.round(ms / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}
