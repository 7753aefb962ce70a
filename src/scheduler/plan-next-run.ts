/**
 * `plan`: quotes what the next `run` would charge given the journal. The
 * decision is `nextRun`'s (the rule `run` carries out); the journal is opened
 * read-only, never created and never locked, so `plan` works beside a running
 * job and before the first run.
 * In the engine, not in decide/: it reads what the engine owns (the
 * preflight, a lost journal's adoption, the account's influencers) around
 * the next run.
 */
import { defaultJournalPath, type LoadedJob, type ModelCatalog } from '../job/index.js';
import { type Journal, openJournalIfAny } from '../journal/index.js';
import {
  type NextRunFacts,
  type Plan,
  type PlanOptions,
  type QuoteClient,
  quotePriceClasses,
} from '../plan/index.js';
import { canonicalServiceUrl, silentLogger } from '../shared/index.js';
import { readAdoption } from './adopt-manifest.js';
import { adoptedReader } from './adopted-reader.js';
import { type PreparedFiles, prepareJobFiles } from './decide/input-files.js';
import { identityOf } from './decide/item-identity.js';
import { nextRun } from './decide/next-run.js';
import type { PlanItem, PlanItems } from './decide/plan-items.js';
import { type JournalReader, NO_HISTORY, scopeOf } from './decide/run-history.js';
import { InfluencerDirectory, type InfluencerLister } from './influencer-directory.js';
import type { Preflight } from './preflight.js';

export interface PlanNextRunInput {
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
  /** The job's items as lean records (plan-items.ts). */
  readonly items: PlanItems;
  /** The job's items' URLs, noted as they were made. */
  readonly preflight: Preflight;
  readonly client: QuoteClient & InfluencerLister & { readonly baseUrl: string };
  readonly accountFingerprint: string;
  /** @default `.ibatch/journal.db` beside the job file */
  readonly journalPath?: string;
  /** `--fresh [steps...]`: quote their done items too (`true`: every step). */
  readonly fresh?: true | readonly string[];
  /** `--run-id`: the run the next `run` would resume or name. */
  readonly runId?: string;
  /** `--max-spend`: a cap on what the next run may commit. */
  readonly maxSpend?: number;
  /** `--service-moved`: the job's unfinished run on another service resumes on this one. */
  readonly serviceMoved?: boolean;
}

export async function planNextRun(
  input: PlanNextRunInput,
  options: PlanOptions = {},
): Promise<Plan> {
  const { job, items, client, preflight } = input;
  const files = await prepareJobFiles(job, items.mediaRefs);
  items.identify(files);
  const journalPath = input.journalPath ?? defaultJournalPath(job.dir);
  // No journal yet (or an empty one `run` makes a journal of): the history
  // is empty (plan must not create one).
  const journal: Journal | undefined = await openJournalIfAny(journalPath);
  try {
    const service = canonicalServiceUrl(client.baseUrl);
    // What `run` would refuse before spending, `plan` refuses too (exit 2).
    const signal = options.signal;
    const influencers = new InfluencerDirectory(client, signal);
    await preflight.check({ service: client.baseUrl, influencers, journal });
    const scope = scopeOf(service, input.accountFingerprint);
    // A lost journal: the next run adopts the output folder's manifest first.
    const keys = () => new Set(items.items.map((i) => i.key));
    const adoption = await readAdoption(journal, job, keys, {
      outputDir: job.output,
      service,
      scope,
      jobItems: items.jobItems,
      identity: identityOf(job, files),
      files,
      influencers,
      logger: silentLogger(),
    });
    const reader = adoption
      ? adoptedReader(journal ?? NO_HISTORY, job, adoption, {
          service,
          scope,
          outputDir: job.output,
        })
      : journal;
    const { charged, facts } = quotedNextRun(reader, input, files, scope);
    // The next run's state (the journal's history of every item) is gone by
    // now: a price class's first charged item may need the job scanned again.
    const classes = items.priceClasses(charged);
    const budget = { name: job.name, budget: job.budget ?? null };
    const standing = journal?.budgetStanding(budget, service);
    const lastTrainingCharge = journal?.lastTrainingCharge(scope);
    return await quotePriceClasses(job, classes, client, {
      ...options,
      next: {
        ...facts,
        ...(lastTrainingCharge !== undefined ? { lastTrainingCharge } : {}),
        ...(standing ? { standing } : {}),
        ...(input.maxSpend !== undefined ? { maxSpend: input.maxSpend } : {}),
      },
    });
  } finally {
    journal?.close();
  }
}

/** `nextRun` of the plan's items: the items it pays for and what the quote says of it. */
function quotedNextRun(
  journal: JournalReader | undefined,
  input: PlanNextRunInput,
  files: PreparedFiles,
  scope: string,
): {
  charged: readonly PlanItem[];
  facts: Pick<NextRunFacts, 'kind' | 'resumes' | 'counts' | 'trainings'>;
} {
  const { job, catalog, items, client } = input;
  const next = nextRun(journal, job, items.items, files, {
    service: canonicalServiceUrl(client.baseUrl),
    ...(input.serviceMoved ? { serviceMoved: true } : {}),
    scope,
    catalog,
    identity: items.identity,
    jobItems: items.jobItems,
    held: items.held,
    ...(input.fresh !== undefined ? { fresh: input.fresh } : {}),
    ...(input.runId !== undefined ? { runId: input.runId } : {}),
  });
  return {
    charged: next.charged,
    facts: {
      kind: next.kind,
      ...(next.resume ? { resumes: next.resume.run.runId } : {}),
      counts: next.counts,
      trainings: { count: next.trainingsToStart.length, reused: next.trainingsReused },
    },
  };
}
