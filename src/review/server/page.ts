/**
 * The review page: one HTML document, inline CSS and JS only (allowed by the
 * response's Content-Security-Policy through their hashes). The shell carries
 * no data but the job's name and folder (escaped); the outputs come from
 * `/api/outputs` a page at a time, so a job of 100,000 outputs opens at once.
 * The token is never written into the page: its script reads it from the
 * address it was opened with.
 */
import { cspHash, html, raw } from '../../outputs/index.js';
import { REVIEW_CSS, REVIEW_JS } from './page-assets.js';

export const SCRIPT_HASH = cspHash(REVIEW_JS);
export const STYLE_HASH = cspHash(REVIEW_CSS);

const KEYS: readonly [string, string][] = [
  ['← →', 'previous / next output'],
  ['a', 'approve the selected output (A: its whole item)'],
  ['r', 'reject it, with an optional note (R: its whole item)'],
  ['n', 'add or edit the note of its decision'],
  ['e', 'reject it with an edited prompt for its next attempt'],
  ['c', 'clear its decision (unreviewed again)'],
  ['/', 'search'],
  ['?', 'show or hide this help'],
];

export function renderReviewPage(jobName: string, outputDir: string): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${jobName} · ibatch review</title>
<style>${raw(REVIEW_CSS)}</style></head>
<body><main>
<header><h1>${jobName}</h1>
<div class="meta"><span>folder <code>${outputDir}</code></span><span id="count"></span>
<span>press <kbd>?</kbd> for keys</span></div>
<div class="spend" data-spend><span>charged <b id="spend-charged"></b></span><span>refunded <b id="spend-refunded"></b></span>
<span>net <b id="spend-net"></b></span><span>approved <b id="n-approved"></b></span>
<span>rejected <b id="n-rejected"></b></span><span>unreviewed <b id="n-unreviewed"></b></span></div>
<section id="help" hidden><h2>Keyboard</h2><dl>${KEYS.map(
    ([key, what]) => html`<div><dt><kbd>${key}</kbd></dt><dd>${what}</dd></div>`,
  )}</dl></section></header>
<div class="bar" role="toolbar">
<select id="f-step" aria-label="step"><option value="">every step</option></select>
<select id="f-status" aria-label="status"><option value="">every status</option></select>
<select id="f-review" aria-label="review"><option value="">every review state</option>
<option value="unreviewed">unreviewed</option><option value="approved">approved</option><option value="rejected">rejected</option></select>
<input id="f-text" type="search" placeholder="search prompt, values, file, note" aria-label="search">
<button type="button" id="bulk-approve">approve all shown</button>
<button type="button" id="bulk-reject">reject all shown</button>
<span id="error" role="alert"></span></div>
<div id="grid"></div><p id="none" class="empty" hidden>No outputs match.</p>
<button type="button" id="more" hidden>more</button>
<dialog id="note"><form id="note-form"><b id="note-title"></b>
<textarea id="note-text" aria-label="note" placeholder="note (optional)"></textarea>
<label id="prompt-box">prompt of the next attempt<textarea id="prompt-text" aria-label="prompt of the next attempt"></textarea></label>
<button type="submit" id="note-ok">Reject</button> <button type="button" id="note-cancel">Cancel</button></form></dialog>
</main><script>${raw(REVIEW_JS)}</script></body></html>
`.__html;
}
