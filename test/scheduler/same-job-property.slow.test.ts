/**
 * "Is this the same job?" as a property: whatever the journal holds (none,
 * empty, last night's, current, a run killed with items in flight), whatever
 * the output folder's manifest says (nothing, what was made, some files
 * missing or changed, other jobs' rows too), under any spelling of the
 * service's base URL and whether or not another job shares the folder, a
 * re-run (a real `ibatch run` process) charges only items that no record
 * shows done with matching files; `plan` quotes what it charges; an item in
 * flight is resumed with its key; the budget is never passed. The emulator's
 * ledger is the judge.
 *
 * The states come from one timeline (same-job-states.ts). Every (journal x
 * manifest) pair runs, each with a base-URL spelling and a sharing drawn from
 * a seeded shuffle (printed: `SAME_JOB_SEED=N` replays it);
 * `SAME_JOB_ALL=1` runs all 160 combinations instead.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { mulberry32, sha256Hex } from '../../src/shared/index.js';
import { manifestRows, spawnCli, testEmulator } from '../helpers/index.js';
import { envFor } from './helpers.js';
import {
  addForeignRows,
  BUDGET,
  buildTimeline,
  chargedProducts,
  cliRun,
  JOB,
  jobNet,
  PRICE,
  PRODUCTS,
  type Product,
  productOf,
  restore,
  SCALE,
  type Timeline,
} from './same-job-states.js';

const JOURNALS = ['none', 'empty', 'stale', 'current', 'killed'] as const;
const MANIFESTS = ['none', 'matching', 'damaged', 'foreign'] as const;
const SPELLINGS = ['127.0.0.1', 'localhost', 'trailing slash', 'upper-case host'] as const;
const SHARING = ['alone', 'shared'] as const;

interface Combination {
  readonly journal: (typeof JOURNALS)[number];
  readonly manifest: (typeof MANIFESTS)[number];
  readonly spelling: (typeof SPELLINGS)[number];
  readonly sharing: (typeof SHARING)[number];
}

const SEED = Number(process.env.SAME_JOB_SEED ?? Date.now() % 1_000_000);

function combinations(): Combination[] {
  if (process.env.SAME_JOB_ALL === '1') {
    return JOURNALS.flatMap((journal) =>
      MANIFESTS.flatMap((manifest) =>
        SPELLINGS.flatMap((spelling) =>
          SHARING.map((sharing) => ({ journal, manifest, spelling, sharing })),
        ),
      ),
    );
  }
  // Each (journal, manifest) pair once; spellings and sharing spread evenly over them.
  const random = mulberry32(SEED);
  const shuffled = <T>(values: readonly T[], n: number): T[] => {
    const list = Array.from({ length: n }, (_, i) => values[i % values.length]!);
    for (let i = list.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
    return list;
  };
  const pairs = JOURNALS.flatMap((journal) => MANIFESTS.map((manifest) => ({ journal, manifest })));
  const spellings = shuffled(SPELLINGS, pairs.length);
  const sharings = shuffled(SHARING, pairs.length);
  return pairs.map((pair, i) => ({ ...pair, spelling: spellings[i]!, sharing: sharings[i]! }));
}

function spelled(baseUrl: string, spelling: Combination['spelling']): string {
  const url = new URL(baseUrl);
  const at = `${url.protocol}//`;
  switch (spelling) {
    case '127.0.0.1':
      return baseUrl;
    case 'localhost':
      return baseUrl.replace(url.hostname, 'localhost');
    case 'trailing slash':
      return `${baseUrl}/`;
    case 'upper-case host':
      return `${at}LOCALHOST:${url.port}${url.pathname}`;
  }
}

/** The manifest as the combination says: gone, as made, two files damaged, or other jobs' rows added. */
function applyManifest(t: Timeline, manifest: Combination['manifest']): void {
  const out = path.join(t.dir, 'out');
  if (manifest === 'none') {
    rmSync(path.join(out, 'manifest.jsonl'), { force: true });
    rmSync(path.join(out, 'manifest.csv'), { force: true });
  } else if (manifest === 'damaged') {
    const file = (product: Product) =>
      t.rows.find((r) => r.file && productOf(r.item) === product)!.file!;
    rmSync(path.join(out, file('teapot')));
    writeFileSync(path.join(out, file('lantern')), 'not the picture any more');
  } else if (manifest === 'foreign') {
    addForeignRows(t);
  }
}

/** The items the manifest file holds rows of now. */
function readManifestItems(t: Timeline): string[] {
  const file = path.join(t.dir, 'out', 'manifest.jsonl');
  return existsSync(file) ? manifestRows<{ item: string }>(file).map((row) => row.item) : [];
}

/** Whether a recorded file is still there with its sha256 and no other name. */
function intact(
  out: string,
  file: string | null | undefined,
  sha256: string | null | undefined,
): boolean {
  if (!file || !sha256) return false;
  const at = path.join(out, file);
  if (!existsSync(at) || statSync(at).nlink !== 1) return false;
  return sha256Hex(readFileSync(at)) === sha256;
}

/**
 * The products some record shows done with matching files: the job's
 * journal (a succeeded item whose downloaded outputs are intact) or its
 * manifest rows as the job wrote them (a succeeded row, its file intact).
 * The rows are the ones the job wrote, not what the file holds after the
 * neighbour ran: a folder shared with another job keeps every job's rows.
 */
async function shownDone(t: Timeline, c: Combination): Promise<Set<Product>> {
  const out = path.join(t.dir, 'out');
  const done = new Set<Product>();
  if (c.manifest !== 'none') {
    for (const row of t.rows) {
      if (row.status === 'succeeded' && intact(out, row.file, row.sha256))
        done.add(productOf(row.item));
    }
  }
  if (c.journal === 'none' || c.journal === 'empty') return done;
  const journal = await openJournal(path.join(t.dir, '.ibatch', 'journal.db'), { readonly: true });
  try {
    for (const run of journal.listRuns(JOB, 1000)) {
      for (const item of journal.listItems(run.runId, { states: ['succeeded'] })) {
        const outputs = journal.listOutputs(run.runId, 'downloaded', item.itemKey);
        if (outputs.length > 0 && outputs.every((o) => intact(out, o.file, o.sha256))) {
          done.add(productOf(item.itemKey));
        }
      }
    }
  } finally {
    journal.close();
  }
  return done;
}

/** What the job's journal counts as committed against its budget on the service. */
async function committed(t: Timeline, service: string): Promise<number> {
  const journal = await openJournal(path.join(t.dir, '.ibatch', 'journal.db'), { readonly: true });
  try {
    return journal.budgetStanding({ name: JOB, budget: BUDGET }, service).committed;
  } finally {
    journal.close();
  }
}

/** The state of each of the killed run's in-flight items now. */
async function statesIn(t: Timeline): Promise<string[]> {
  const journal = await openJournal(path.join(t.dir, '.ibatch', 'journal.db'), { readonly: true });
  try {
    return t.killed.inFlight.map((key) => journal.getItem(t.killed.runId, key)?.state ?? 'gone');
  } finally {
    journal.close();
  }
}

let em: RunningEmulator;
let timeline: Timeline;

describe(`a re-run charges only what no record shows done (seed ${SEED})`, () => {
  beforeAll(async () => {
    console.log(`same-job property: SAME_JOB_SEED=${SEED}`);
    em = await testEmulator({ timeScale: SCALE });
    timeline = await buildTimeline(em);
  }, 120_000);

  it.each(combinations())(
    'journal $journal, manifest $manifest, $spelling, $sharing',
    async (c) => {
      const t = timeline;
      restore(t, c.journal, c.sharing === 'shared');
      applyManifest(t, c.manifest);
      // Named in a failure: a shared folder whose manifest lost this job's rows.
      const kept = readManifestItems(t).some((item) => PRODUCTS.some((p) => item.includes(p)));
      const doneBefore = await shownDone(t, c);
      const env = { IBATCH_BASE_URL: spelled(em.baseUrl, c.spelling) };
      const before = await chargedProducts(em);
      const netBefore = await jobNet(em);

      const plan = await spawnCli(['plan', t.jobPath, '--json'], {
        cwd: t.dir,
        env: { ...envFor(em, SCALE), ...env },
      }).exited;
      expect(plan.code, plan.stderr).toBe(0);
      const quoted = (JSON.parse(plan.stdout) as { total: number }).total;
      const rerun = await cliRun(em, t.jobPath, env);
      expect(rerun.code, rerun.stderr).toBe(0);

      const charged = (await chargedProducts(em)).slice(before.length);
      const notAllowed = charged.filter((p) => doneBefore.has(p));
      const note =
        c.sharing === 'shared' && c.manifest !== 'none' && !kept
          ? " (the neighbour's run left the manifest without this job's rows)"
          : '';
      expect(notAllowed, `charged though a record shows them done${note}`).toEqual([]);
      expect(new Set(charged).size, 'an item charged twice').toBe(charged.length);
      const spent = (await jobNet(em)) - netBefore;
      if (c.journal === 'killed') {
        // An intent the killed run committed may not have reached the
        // service: `plan` counts it, the resume finds it made.
        expect(quoted, 'plan quotes what run charges').toBeGreaterThanOrEqual(spent);
        expect(quoted - spent).toBeLessThanOrEqual(PRICE * t.killed.maybeSent);
      } else {
        expect(quoted, 'plan quotes what run charges').toBe(spent);
      }
      // The journal's own count never passes the budget; a journal that saw
      // the whole history keeps the ledger under it too.
      expect(await committed(t, env.IBATCH_BASE_URL), 'over the budget').toBeLessThanOrEqual(
        BUDGET,
      );
      if (c.journal === 'current' || c.journal === 'killed') {
        expect(t.net + spent, 'over the budget (ledger)').toBeLessThanOrEqual(BUDGET);
      }
      if (c.journal === 'killed') {
        // Resumed with their keys in the killed run, not adopted over.
        expect(await statesIn(t)).toEqual(t.killed.inFlight.map(() => 'succeeded'));
      }
    },
    60_000,
  );
});
