/**
 * The pieces `report.html` is made of (report-html.ts puts them together):
 * the totals and cost cards, the tables, a card of one output, the badges
 * and the times. Each escapes every value it is given (`html`).
 */
import type { CostSummary } from './costs.js';
import { html, localHref, type RawHtml } from './html.js';
import type { ManifestRow } from './manifest-row.js';
import type { ReportData, ReportEvent, ReportTraining } from './report-data.js';
import type { PagedList, ReportPager } from './report-pages.js';

/** How many of the run's files are no longer current, superseded and retired apart. */
export function notCurrentLine(counts: { superseded: number; retired: number }): RawHtml | string {
  if (counts.superseded + counts.retired === 0) return '';
  return html`<p class="empty" data-not-current>Not current: <b data-superseded>${fmt(counts.superseded)}</b> superseded by a newer run, <b data-retired>${fmt(counts.retired)}</b> removed from the job.</p>`;
}

export function totalCards(costs: CostSummary): RawHtml {
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
export function tagLine(
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

export function costTable(costs: CostSummary): RawHtml {
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

export function trainingTable(trainings: readonly ReportTraining[]): RawHtml {
  const rows = trainings.map(
    (t) => html`<tr><td>${t.id}</td><td>${t.name}</td><td>${statusBadge(t.status)}</td>
<td class="mono">${t.influencerId ?? ''}</td><td class="num">${credits(t.creditsCost ?? 0)}</td>
<td>${t.refunded ? 'yes' : 'no'}</td><td>${t.error ?? ''}</td></tr>`,
  );
  return html`<h2>Influencer training</h2><table><thead><tr><th>id</th><th>name</th><th>status</th>
<th>influencer</th><th class="num">cost</th><th>refunded</th><th>error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function tile(row: ManifestRow): RawHtml {
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

export function failureRow(r: ManifestRow): RawHtml {
  return html`<tr class="tile-failed" data-status="failed" data-generation-id="${r.generationId ?? ''}"><td>${r.step}</td>
<td title="${r.item}">${titleOf(r)}${r.n === undefined ? '' : ` #${r.n}`}</td><td>${r.modelId}</td>
<td>${statusBadge(r.status)}</td><td>${r.error ?? ''}</td><td class="num">${credits(r.creditsCost ?? 0)}</td>
<td>${r.refunded ? 'yes' : 'no'}</td></tr>`;
}

export function failureTable(failed: PagedList): RawHtml {
  if (failed.length === 0) return html`<p class="empty">No failures.</p>`;
  const { list, more } = failed.close();
  return html`<table class="failures"><thead><tr><th>step</th><th>item</th><th>model</th><th>status</th>
<th>reason</th><th class="num">cost</th><th>refunded</th></tr></thead>${list}</table>${more}`;
}

export function timeline(events: readonly ReportEvent[], pager: ReportPager): RawHtml {
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
export function fmt(n: number): string {
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
export function timeTag(iso: string, style: 'date' | 'time' = 'date'): RawHtml {
  return html`<time datetime="${iso}" data-local="${style}" title="${iso}">${iso}</time>`;
}

/** `1 h 02 min`, `3 min 12 s`, `12 s`: how long the run took. */
export function durationText(startedAt: string, finishedAt: string): string {
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  if (!Number.isFinite(ms) || ms < 0) return 'unknown';
  const s = Math.round(ms / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}
