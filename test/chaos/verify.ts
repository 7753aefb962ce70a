import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { GenerationRequest } from '../../src/contract/index.js';
import { type LedgerEntry, priceOf, TRAINING_COST } from '../../src/emulator/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { type AttemptRow, type ItemRow, type OutputRow, readJournalRows } from './journal-rows.js';

export interface VerifyInput {
  readonly journalPath: string;
  readonly outDir: string;
  readonly ledger: readonly LedgerEntry[];
  /** Items the job expands to, trainings included (distinct item keys over all runs). */
  readonly expectedItems: number;
  /** Runs the journal should hold (a convergent re-run adds one). @default 1 */
  readonly expectedRuns?: number;
}

export interface Verdict {
  readonly violations: string[];
  readonly items: number;
  readonly chargedOnce: number;
  readonly double: number;
  readonly lost: number;
  readonly outputs: number;
  readonly refunds: number;
  readonly states: Record<string, number>;
}

const EPS = 1e-6;

/**
 * An attempt the service lost (chaos "service state lost") and the user let
 * go of with `run --forget-lost`: its charge stays with the service, the item
 * was made again. It keeps at most its one charge.
 */
function lostByService(a: AttemptRow, charge: number): boolean {
  return a.state === 'failed' && (a.error ?? '').startsWith('lost by the service') && charge > 0;
}
const FINAL = new Set(['succeeded', 'failed', 'blocked', 'skipped']);

export async function verifyCampaign(input: VerifyInput): Promise<Verdict> {
  const v: string[] = [];
  const { integrity, runs, items, attempts, outputs } = await readJournalRows(input.journalPath);
  const runRank = new Map<string, number>();
  if (integrity !== 'ok') v.push(`journal integrity_check: ${integrity}`);
  const expectedRuns = input.expectedRuns ?? 1;
  if (runs.length !== expectedRuns)
    v.push(`expected ${expectedRuns} run(s) in the journal, found ${runs.length}`);
  for (const [rank, r] of runs.entries()) {
    runRank.set(r.run_id, rank);
    if (!r.status.startsWith('completed')) v.push(`run ${r.run_id} ended ${r.status}`);
  }
  const distinct = new Set(items.map((i) => i.item_key));
  if (distinct.size !== input.expectedItems) {
    v.push(`expected ${input.expectedItems} items in the journal, found ${distinct.size}`);
  }
  const rowKey = (r: { run_id: string; item_key: string }) => `${r.run_id}|${r.item_key}`;
  const attempted = new Set(attempts.map(rowKey));
  // A training a later run reuses is recorded there as succeeded without any
  // attempt (nothing sent, nothing charged): not a second making of it.
  const reused = (item: ItemRow) =>
    item.kind === 'training' &&
    item.state === 'succeeded' &&
    !attempted.has(rowKey(item)) &&
    item.charged_credits === 0;
  // A re-run makes only what is missing: an item done in one run is never made in another.
  const succeededRuns = new Map<string, number>();
  for (const item of items) {
    if (item.state !== 'succeeded' || reused(item)) continue;
    succeededRuns.set(item.item_key, (succeededRuns.get(item.item_key) ?? 0) + 1);
  }
  // ...unless its `from:` source was made again after the clip's first making
  // (the source's earlier output was never delivered): then the clip of the
  // new source is a new desired item.
  const sourceOf = new Map(items.map((i) => [i.item_key, i.source_item_key]));
  const rankOf = (row: ItemRow) => runRank.get(row.run_id) ?? -1;
  const remadeSource = (key: string) => {
    const source = sourceOf.get(key);
    if (source === null || source === undefined) return false;
    const firstClip = Math.min(
      ...items.filter((i) => i.item_key === key && i.state === 'succeeded').map(rankOf),
    );
    return items.some(
      (i) => i.item_key === source && i.state === 'succeeded' && rankOf(i) > firstClip,
    );
  };
  for (const [key, n] of succeededRuns) {
    if (n > 1 && !remadeSource(key))
      v.push(`${key}: made in ${n} runs (a done item was created again)`);
  }

  // Ledger, grouped by idempotency key.
  const byKey = new Map<string, { charges: number[]; refunds: number }>();
  for (const e of input.ledger) {
    if (!e.idempotencyKey) {
      v.push(`ledger entry #${e.seq} (${e.type} ${e.amount}) carries no idempotency key`);
      continue;
    }
    const slot = byKey.get(e.idempotencyKey) ?? { charges: [], refunds: 0 };
    if (e.type === 'charge') slot.charges.push(e.amount);
    else slot.refunds += e.amount;
    byKey.set(e.idempotencyKey, slot);
  }
  const attemptsByItem = new Map<string, AttemptRow[]>();
  for (const a of attempts) {
    const list = attemptsByItem.get(rowKey(a)) ?? [];
    list.push(a);
    attemptsByItem.set(rowKey(a), list);
  }
  const journalKeys = new Set(attempts.map((a) => a.idempotency_key));
  for (const key of byKey.keys()) {
    if (!journalKeys.has(key)) v.push(`ledger charges key ${key}, which no journal attempt holds`);
  }

  // Counted per logical item (item key), over every run that holds it.
  const doubledKeys = new Set<string>();
  const lostKeys = new Set<string>();
  const stateOf = new Map<string, string>();
  let refunds = 0;
  const states: Record<string, number> = {};
  for (const item of items) {
    if (stateOf.get(item.item_key) !== 'succeeded') stateOf.set(item.item_key, item.state);
    if (reused(item)) continue;
    const list = attemptsByItem.get(rowKey(item)) ?? [];
    if (!FINAL.has(item.state)) {
      lostKeys.add(item.item_key);
      v.push(`${item.item_key}: left ${item.state}`);
      continue;
    }
    let doubled = false;
    let net = 0;
    let chargedAttempts = 0;
    // What lost attempts were charged: the journal keeps it, the service may have refunded it.
    let lostCharge = 0;
    for (const a of list) {
      const slot = byKey.get(a.idempotency_key);
      const charges = slot?.charges ?? [];
      if (charges.length > 1) {
        doubled = true;
        v.push(`${item.item_key} a${a.attempt_no}: charged ${charges.length} times under one key`);
      }
      const charge = charges.reduce((s, x) => s + x, 0);
      const attemptNet = charge - (slot?.refunds ?? 0);
      if (slot && slot.refunds > 0) refunds += 1;
      net += attemptNet;
      if (lostByService(a, charge)) lostCharge += charge;
      else if (attemptNet > EPS) chargedAttempts += 1;
      if (!FINAL.has(a.state) && a.state !== 'rejected')
        v.push(`${item.item_key} a${a.attempt_no}: attempt left ${a.state}`);
      const final = a === list.at(-1);
      // An item whose output URL could never be downloaded (a hostile URL)
      // fails for good after a succeeded, charged generation: it keeps it.
      const undeliverable = item.state === 'failed' && a.state === 'succeeded';
      const keeps =
        final && (item.state === 'succeeded' || item.state === 'blocked' || undeliverable);
      if (keeps) {
        const price =
          item.kind === 'training'
            ? TRAINING_COST
            : priceOf(item.model_id ?? '', JSON.parse(a.request_json) as GenerationRequest).cost;
        if (Math.abs(charge - price) > EPS) {
          doubled ||= charge > price;
          v.push(`${item.item_key} a${a.attempt_no}: charged ${charge}, price ${price}`);
        }
      } else if (Math.abs(attemptNet) > EPS && !lostByService(a, charge)) {
        doubled = true;
        v.push(
          `${item.item_key} a${a.attempt_no} (${a.state}): ${attemptNet} credits kept although it is not the item's result`,
        );
      }
    }
    const succeededAttempts = list.filter((a) => a.state === 'succeeded').length;
    if (
      item.state === 'succeeded' &&
      (succeededAttempts !== 1 || list.at(-1)?.state !== 'succeeded')
    ) {
      v.push(
        `${item.item_key}: ${succeededAttempts} succeeded attempts (expected exactly 1, the last)`,
      );
    }
    if ((item.state === 'succeeded' || item.state === 'blocked') && chargedAttempts !== 1) {
      v.push(`${item.item_key}: ${chargedAttempts} attempts kept a charge (expected 1)`);
    }
    const journalNet = item.charged_credits - item.refunded_credits;
    // A lost attempt's refund (if the service gave one) never reached the journal: it counts high, never low.
    const lostSlack = journalNet >= net - EPS && journalNet - net <= lostCharge + EPS;
    if (Math.abs(journalNet - net) > EPS && !lostSlack) {
      v.push(
        `${item.item_key}: journal net ${item.charged_credits - item.refunded_credits} != ledger net ${net}`,
      );
    }
    // A skipped item (its source failed) is done and must have cost nothing.
    if (doubled) doubledKeys.add(item.item_key);
  }

  for (const state of stateOf.values()) states[state] = (states[state] ?? 0) + 1;
  const outputCount = await verifyOutputs(input.outDir, items, outputs, v);
  return {
    violations: v,
    items: distinct.size,
    chargedOnce: distinct.size - doubledKeys.size - lostKeys.size,
    double: doubledKeys.size,
    lost: lostKeys.size,
    outputs: outputCount,
    refunds,
    states,
  };
}

async function verifyOutputs(
  outDir: string,
  items: ItemRow[],
  outputs: OutputRow[],
  v: string[],
): Promise<number> {
  const rowKey = (r: { run_id: string; item_key: string }) => `${r.run_id}|${r.item_key}`;
  const succeeded = new Set(
    items.filter((i) => i.state === 'succeeded' && i.kind !== 'training').map(rowKey),
  );
  const expected = new Map<string, OutputRow>();
  const ids = new Set<string>();
  for (const o of outputs) {
    if (!succeeded.has(rowKey(o))) continue;
    // A copy the service failed (no URL) is listed, never downloaded.
    if (o.state === 'failed' && o.url === null) continue;
    if (o.state !== 'downloaded' || !o.file || !o.sha256) {
      v.push(`output ${o.item_key}#${o.n} is ${o.state}, not downloaded`);
      continue;
    }
    if (o.generation_id) {
      if (ids.has(o.generation_id)) v.push(`generation ${o.generation_id} recorded as two outputs`);
      ids.add(o.generation_id);
    }
    expected.set(`${rowKey(o)}#${o.n}`, o);
  }
  for (const key of succeeded) {
    if (!outputs.some((o) => rowKey(o) === key)) v.push(`${key} succeeded without outputs`);
  }
  const manifest = (await readFile(path.join(outDir, 'manifest.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as {
          runId?: string;
          item: string;
          n?: number;
          status: string;
          file?: string;
          sha256?: string;
        },
    );
  const seen = new Set<string>();
  for (const row of manifest) {
    if (row.status !== 'succeeded') {
      if (row.file) v.push(`manifest: ${row.item} is ${row.status} but names a file`);
      continue;
    }
    const key = `${row.runId ?? ''}|${row.item}#${row.n}`;
    if (seen.has(key)) v.push(`manifest: ${key} listed twice`);
    seen.add(key);
    const out = expected.get(key);
    if (!out) {
      v.push(`manifest: ${key} is not a downloaded output in the journal`);
      continue;
    }
    if (row.file !== out.file || row.sha256 !== out.sha256)
      v.push(`manifest: ${key} disagrees with the journal`);
    const bytes = await readFile(path.join(outDir, row.file ?? '')).catch(() => undefined);
    if (!bytes) v.push(`manifest: ${key} file ${row.file} is missing`);
    else if (sha256Hex(bytes) !== row.sha256) {
      v.push(`manifest: ${key} file ${row.file} does not match its sha256`);
    }
  }
  for (const key of expected.keys()) if (!seen.has(key)) v.push(`manifest: output ${key} missing`);
  const files = await listFiles(outDir);
  const parts = files.filter((f) => /\.part-[0-9a-f]+$/.test(f));
  for (const f of parts) v.push(`stray partial download ${f}`);
  const media = files.filter(
    (f) => /\.(png|jpe?g|webp|gif|mp4|webm|mov)$/i.test(f) && !f.includes('report'),
  );
  if (media.length !== expected.size) {
    v.push(
      `${media.length} media files under the output folder, ${expected.size} outputs expected`,
    );
  }
  return expected.size;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}
