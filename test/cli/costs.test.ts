/**
 * `ibatch costs`: two tagged jobs run against the emulator over
 * three days; in every `--by` and with `--since`, the journal's groups equal
 * the emulator's ledger, charge by charge, mapped to groups by generation (or
 * training) id. The CLI runs in-process over real HTTP and a real SQLite file.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CostsDocument } from '../../src/cli/costs-view.js';
import type { LedgerEntry, RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { canonicalServiceUrl } from '../../src/shared/index.js';
import {
  emulatorEnv,
  parseCsv,
  runCliCaptured,
  said,
  scaledLimits,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { makePng } from '../uploads/fixtures/media-samples.js';

const SCALE = 40;
const DAY = 86_400_000;

const ACME = (scenes: string) => `version: 1
name: costs-acme
tags: { client: acme, campaign: spring }
output: out-acme
generations:
  - id: shots
    model: sdxl-lite
    matrix: { scene: [${scenes}] }
    input: { prompt: "a quiet street, {{ scene }}" }
  - id: pairs
    model: sdxl-lite
    copies: 2
    matrix: { look: [dawn, dusk] }
    input: { prompt: "a harbour at {{ look }}" }
`;

const GLOBEX = `version: 1
name: costs-globex
tags: { client: globex }
output: out-globex
uploads:
  refs: { files: ["refs/*.png"] }
influencers:
  kai: { name: Kai Costs, style: realistic, gender: male, images: refs, consentAcknowledged: true }
generations:
  - id: portraits
    model: flux-portrait
    influencer: kai
    matrix: { scene: [beach, rooftop] }
    input: { prompt: "Kai on a {{ scene }}", aspectRatio: "9:16" }
`;

/** What the ledger says one group spent. */
interface Expected {
  charged: number;
  refunded: number;
  generations: number;
  trainings: number;
}

let em: RunningEmulator;
let dir: string;
let ledger: LedgerEntry[];
/** generation or training id -> where the journal recorded its charge. */
let chargedBy: Map<string, { job: string; step: string; runId: string }>;
/** Days each run was moved back (the fixture step below). */
const shiftedDays = new Map<string, number>();
const TAGS: Record<string, Record<string, string>> = {
  'costs-acme': { client: 'acme', campaign: 'spring' },
  'costs-globex': { client: 'globex' },
};

async function run(jobFile: string): Promise<void> {
  const env = { ...emulatorEnv(em), IBATCH_LIMITS: scaledLimits(SCALE) };
  const result = await runCliCaptured(['run', jobFile], env, dir);
  expect(result.code, said(result)).toBe(0);
}

async function newestRun(job: string): Promise<string> {
  const journal = await openJournal(path.join(dir, '.ibatch', 'journal.db'), { readonly: true });
  try {
    const [newest] = journal.listRuns(job, 1);
    if (!newest) throw new Error(`no run of ${job}`);
    return newest.runId;
  } finally {
    journal.close();
  }
}

/**
 * Stands for a run made `days` days earlier: every recorded time of the run
 * (run, items, attempts, outputs, events) moves back by whole days. Tests
 * cannot wait for midnight; this is the only thing not made by a real run.
 */
function moveBack(runId: string, days: number): void {
  const db = new Database(path.join(dir, '.ibatch', 'journal.db'));
  try {
    const d = days * DAY;
    db.transaction(() => {
      db.prepare(
        'UPDATE runs SET created_at = created_at - @d, updated_at = updated_at - @d, finished_at = finished_at - @d WHERE run_id = @runId',
      ).run({ d, runId });
      db.prepare(
        'UPDATE items SET created_at = created_at - @d, updated_at = updated_at - @d WHERE run_id = @runId',
      ).run({ d, runId });
      db.prepare(
        'UPDATE attempts SET created_at = created_at - @d, submitted_at = submitted_at - @d, finished_at = finished_at - @d WHERE item_row IN (SELECT rowid FROM items WHERE run_id = @runId)',
      ).run({ d, runId });
      db.prepare(
        'UPDATE outputs SET created_at = created_at - @d, updated_at = updated_at - @d WHERE item_row IN (SELECT rowid FROM items WHERE run_id = @runId)',
      ).run({ d, runId });
      db.prepare('UPDATE events SET at = at - @d WHERE run_id = @runId').run({ d, runId });
    })();
  } finally {
    db.close();
  }
  shiftedDays.set(runId, days);
}

/** Every charged id of the journal: which job, step and run it belongs to. */
async function journalCharges(): Promise<
  Map<string, { job: string; step: string; runId: string }>
> {
  const journal = await openJournal(path.join(dir, '.ibatch', 'journal.db'), { readonly: true });
  const found = new Map<string, { job: string; step: string; runId: string }>();
  try {
    for (const r of journal.listRuns()) {
      for (const item of journal.listItems(r.runId)) {
        for (const a of journal.listAttempts(r.runId, item.itemKey)) {
          const at = { job: r.jobName, step: item.stepId, runId: r.runId };
          for (const id of a.generationIds as string[]) found.set(id, at);
          if (a.trainingId) found.set(a.trainingId, at);
        }
      }
    }
  } finally {
    journal.close();
  }
  return found;
}

/**
 * The ledger grouped like `costs --by`: each entry goes to the group of the
 * charge it belongs to (a refund to its charge's), its day the ledger's own
 * time moved back as its run was; `since` drops charges before it.
 */
function fromLedger(key: (at: { job: string; step: string; day: string }) => string, since = 0) {
  const groups = new Map<string, Expected>();
  const chargeAt = new Map<string, number>();
  for (const e of ledger) {
    const id = e.trainingId ?? e.generationIds?.[0];
    const where = id === undefined ? undefined : chargedBy.get(id);
    if (!id || !where) throw new Error(`ledger entry ${e.seq} is not in the journal`);
    const idKey = e.trainingId ?? e.idempotencyKey ?? id;
    if (e.type === 'charge')
      chargeAt.set(idKey, Date.parse(e.at) - (shiftedDays.get(where.runId) ?? 0) * DAY);
    const at = chargeAt.get(idKey);
    if (at === undefined) throw new Error(`refund ${e.seq} before its charge`);
    if (at < since) continue;
    const k = key({ ...where, day: new Date(at).toISOString().slice(0, 10) });
    const g = groups.get(k) ?? { charged: 0, refunded: 0, generations: 0, trainings: 0 };
    if (e.type === 'refund') g.refunded += e.amount;
    else {
      g.charged += e.amount;
      if (e.trainingId) g.trainings += 1;
      else g.generations += 1; // one charge, however many copies it made
    }
    groups.set(k, g);
  }
  return groups;
}

async function costs(args: string[]): Promise<CostsDocument> {
  const result = await runCliCaptured(['costs', ...args, '--json'], {}, dir);
  expect(result.code, said(result)).toBe(0);
  return JSON.parse(result.stdout) as CostsDocument;
}

function expectSame(
  doc: CostsDocument,
  expected: Map<string, Expected>,
  keyOf = (k: string | null) => k ?? '(none)',
) {
  const got = new Map(
    doc.groups.map((g) => [
      keyOf(g.key) + (g.job ? `@${g.job}` : ''),
      {
        charged: g.charged,
        refunded: g.refunded,
        generations: g.generations,
        trainings: g.trainings,
      },
    ]),
  );
  expect(Object.fromEntries(got)).toEqual(Object.fromEntries(expected));
  const sum = (pick: (e: Expected) => number) =>
    [...expected.values()].reduce((s, e) => s + pick(e), 0);
  expect(doc.total).toEqual({
    charged: sum((e) => e.charged),
    refunded: sum((e) => e.refunded),
    net: sum((e) => e.charged) - sum((e) => e.refunded),
    generations: sum((e) => e.generations),
    trainings: sum((e) => e.trainings),
  });
  for (const g of doc.groups) expect(g.net).toBe(g.charged - g.refunded);
}

const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

beforeAll(async () => {
  em = await testEmulator({ timeScale: SCALE, trainingMs: { lora: 4000 } });
  dir = tempDir('costs');
  mkdirSync(path.join(dir, 'refs'));
  for (const i of [1, 2, 3]) {
    writeFileSync(
      path.join(dir, 'refs', `ref-${i}.png`),
      makePng(40 + i * 8, 48, [i * 60, 90, 70]),
    );
  }
  const acme = path.join(dir, 'acme.yaml');
  const globex = path.join(dir, 'globex.yaml');
  writeFileSync(acme, ACME('s1, s2, s3'));
  writeFileSync(globex, GLOBEX);
  // One generation fails (and is refunded) in acme's first run: it is retried.
  await em.admin.scriptFaults([
    { endpoint: 'createGeneration', fault: 'generation-fail', times: 1 },
  ]);
  await run(acme);
  moveBack(await newestRun('costs-acme'), 2);
  await run(globex);
  moveBack(await newestRun('costs-globex'), 1);
  writeFileSync(acme, ACME('s1, s2, s3, s4, s5'));
  await run(acme);
  ledger = await em.admin.ledger(em.accounts[0]!.id);
  chargedBy = await journalCharges();
}, 120_000);

describe('ibatch costs', () => {
  it('the fixture spans two jobs, three days, a refund and a training', () => {
    expect(ledger.filter((e) => e.type === 'refund')).toHaveLength(1);
    expect(ledger.filter((e) => e.trainingId)).toHaveLength(1);
    expect(new Set([...chargedBy.values()].map((c) => c.runId)).size).toBe(3);
  });

  it('--by job (the default): each job as the ledger charged it', async () => {
    const doc = await costs([]);
    expect(doc).toMatchObject({
      by: 'job',
      job: null,
      since: null,
      services: [canonicalServiceUrl(em.baseUrl)],
    });
    expectSame(
      doc,
      fromLedger((at) => at.job),
    );
  });

  it('--by step: per step of each job, trainings in the influencers step', async () => {
    const doc = await costs(['--by', 'step']);
    expectSame(
      doc,
      fromLedger((at) => `${at.step}@${at.job}`),
    );
    expect(doc.groups.find((g) => g.key === 'influencers')?.trainings).toBe(1);
  });

  it('--by tag:client and tag:campaign (a job without the tag is "(none)")', async () => {
    const client = await costs(['--by', 'tag:client']);
    expectSame(
      client,
      fromLedger((at) => TAGS[at.job]?.client ?? '(none)'),
    );
    expect(client.groups.map((g) => g.key)).toEqual(['acme', 'globex']);
    const campaign = await costs(['--by', 'tag:campaign']);
    expectSame(
      campaign,
      fromLedger((at) => TAGS[at.job]?.campaign ?? '(none)'),
    );
    expect(campaign.groups.map((g) => g.key)).toEqual(['spring', null]);
  });

  it('--by day: UTC date of each charge, its refund on the same day', async () => {
    const doc = await costs(['--by', 'day']);
    expectSame(
      doc,
      fromLedger((at) => at.day),
    );
    // Three days (four when a run straddled midnight UTC), oldest first.
    const days = doc.groups.map((g) => g.key ?? '');
    expect(days).toEqual([...days].sort());
    expect(days.length).toBeGreaterThanOrEqual(3);
    expect(days[0]).toBe(new Date(Date.parse(ledger[0]!.at) - 2 * DAY).toISOString().slice(0, 10));
  });

  it('--since a date, and a job file: only that job, only charges from then on', async () => {
    const since = daysAgo(1);
    const all = await costs(['--by', 'day', '--since', since]);
    expectSame(
      all,
      fromLedger((at) => at.day, Date.parse(`${since}T00:00:00Z`)),
    );
    expect(all.since).toBe(`${since}T00:00:00.000Z`);
    const acme = await costs([path.join(dir, 'acme.yaml'), '--by', 'step', '--since', since]);
    expect(acme.job).toBe('costs-acme');
    const ofAcme = fromLedger((at) => `${at.step}@${at.job}`, Date.parse(`${since}T00:00:00Z`));
    for (const key of ofAcme.keys()) if (!key.endsWith('@costs-acme')) ofAcme.delete(key);
    expectSame(acme, ofAcme);
  });

  it('--csv parses to the same numbers as --json, total row last', async () => {
    const json = await costs(['--by', 'tag:client']);
    const result = await runCliCaptured(['costs', '--by', 'tag:client', '--csv'], {}, dir);
    expect(result.code, said(result)).toBe(0);
    const csv = parseCsv(result.stdout);
    expect(csv.header).toEqual([
      'client',
      'charged',
      'refunded',
      'net',
      'generations',
      'trainings',
    ]);
    const rows = csv.records.map((r) => r.map((c, i) => (i === 0 ? c : Number(c))));
    expect(rows).toEqual([
      ...json.groups.map((g) => [g.key, g.charged, g.refunded, g.net, g.generations, g.trainings]),
      [
        '(total)',
        json.total.charged,
        json.total.refunded,
        json.total.net,
        json.total.generations,
        json.total.trainings,
      ],
    ]);
  });

  it('a table for people; an unknown --by, or --json with --csv, exits 2', async () => {
    const table = await runCliCaptured(['costs', '--by', 'tag:client'], {}, dir);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^client\s+charged\s+refunded\s+net\s+generations\s+trainings$/m);
    expect(table.stdout).toMatch(/^\(total\)\s+\d/m);
    for (const args of [
      ['--by', 'model'],
      ['--by', 'tag:'],
      ['--json', '--csv'],
      ['--since', 'yesterday'],
    ]) {
      const bad = await runCliCaptured(['costs', ...args], {}, dir);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr).toMatch(/Expected `--(by|json|since)`/);
    }
  });

  it("report.html shows the job's tags and what all its runs spent; status shows the tags", async () => {
    const { total } = await costs([path.join(dir, 'acme.yaml')]);
    const report = readFileSync(path.join(dir, 'out-acme', 'report.html'), 'utf8');
    expect(report).toContain('<span class="badge" data-tag="client">client: acme</span>');
    expect(report).toContain('data-tag="campaign">campaign: spring<');
    expect(report).toContain(`<b data-job-net>${total.net} credits</b>`);
    const status = await runCliCaptured(['status', path.join(dir, 'globex.yaml')], {}, dir);
    expect(status.stdout).toContain('  tags: client=globex\n');
  });
});

describe('tags of a resumed run', () => {
  it('a run resumed with changed tags counts its whole spend under the new ones', async () => {
    const ws = tempDir('costs-resume');
    const job = path.join(ws, 'job.yaml');
    const text = (client: string) =>
      `version: 1\nname: costs-resume\ntags: { client: ${client} }\noutput: out\ngenerations:\n  - id: shots\n    model: sdxl-lite\n    matrix: { scene: [a, b, c] }\n    input: { prompt: "a {{ scene }}" }\n`;
    writeFileSync(job, text('before'));
    const env = { ...emulatorEnv(em, 1), IBATCH_LIMITS: scaledLimits(SCALE) };
    const stopped = await runCliCaptured(['run', job, '--max-spend', '2'], env, ws);
    expect(stopped.code, said(stopped)).toBe(3);
    writeFileSync(job, text('after'));
    const resumed = await runCliCaptured(['run', job], env, ws);
    expect(resumed.code, said(resumed)).toBe(0);

    const result = await runCliCaptured(['costs', job, '--by', 'tag:client', '--json'], {}, ws);
    const doc = JSON.parse(result.stdout) as CostsDocument;
    const account = await em.admin.ledger(em.accounts[1]!.id);
    const net = account.reduce((n, e) => n + (e.type === 'charge' ? e.amount : -e.amount), 0);
    expect(doc.groups.map((g) => [g.key, g.net, g.generations])).toEqual([['after', net, 3]]);
    const status = await runCliCaptured(['status', job, '--json'], {}, ws);
    const { runs, run } = JSON.parse(status.stdout) as { runs: unknown[]; run: { tags: unknown } };
    expect(runs).toHaveLength(1);
    expect(run.tags).toEqual({ client: 'after' });
  });
});
