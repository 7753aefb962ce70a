/**
 * `runJob`: validates the job, opens the journal and makes what the job file
 * describes and the journal does not show done (src/plan/desired-state.ts):
 * resumes the job's unfinished run, or starts a run for what is missing, or
 * does nothing. Each run drives its items concurrently, a bounded window of
 * them at a time (item-window.ts); the rate gate, the create queue and the
 * budget decide what actually goes out. A run ends by
 * rewriting the manifest and the report from the journal, whatever stopped it.
 */
import path from 'node:path';
import { defaultJournalPath, jobInputPaths } from '../job/index.js';
import {
  holderLogFields,
  type Journal,
  journalFiles,
  journalWritable,
  openJournal,
  openJournalIfAny,
  type RunSpendCap,
  serviceOfRun,
} from '../journal/index.js';
import { assertWritableFolder } from '../outputs/index.js';
import { canonicalServiceUrl, EXIT, silentLogger, thisMachine } from '../shared/index.js';
import { adoptLostJournal } from './adopt-manifest.js';
import { assertNextRunFits } from './all-or-nothing.js';
import { checkForRun, type LeanJob } from './check-job.js';
import { assertFreshSteps, freshSteps } from './decide/fresh.js';
import { prepareJobFiles } from './decide/input-files.js';
import { identityOf, trainingsToSeed } from './decide/item-identity.js';
import { runIdFamily, scopeOf } from './decide/run-history.js';
import { markRunning, selectRun } from './decide/select-run.js';
import { assertSameService, IN_PROCESS_EMULATOR } from './decide/service-move.js';
import { outputsLeftToDownload, withoutFailedItems } from './downloads.js';
import { driveRun } from './drive-run.js';
import { recordEscapedStop } from './finish-run.js';
import { InfluencerDirectory } from './influencer-directory.js';
import { FIRST_BATCH } from './items-to-drive.js';
import { inputFingerprint, namesOwnFiles } from './job-facts.js';
import { nothingToDo } from './nothing-to-do.js';
import { OutputFolderLocks } from './output-folder-lock.js';
import { runOutputDir } from './run-folder.js';
import { assertRunId } from './run-id.js';
import { contractHashes, persistedWait } from './run-wiring.js';
import type { RunJobOptions, RunResult } from './types.js';

type Files = Awaited<ReturnType<typeof prepareJobFiles>>;
type Logger = NonNullable<RunJobOptions['logger']>;

/**
 * The first verb of the run chain (docs/glossary.md "the run chain"): the
 * invocation. It adds everything that must hold before anything is spent
 * and that is held for the whole invocation: validation and preflight, the
 * authenticated read, the journal's lock and the output folders' locks,
 * released whatever happens. Its own function because `converge` may drive
 * several runs under those locks; merged, the locks' `finally` and the
 * "nothing spent yet" checks would mix with the per-run loop.
 */
export async function runJob(options: RunJobOptions): Promise<RunResult> {
  const logger = options.logger ?? silentLogger();
  const { client } = options;
  if (options.runId !== undefined) assertRunId(options.runId);
  // Everything that can reject the job happens before the journal opens:
  // a bad job file, a bad local file or a refused key spends nothing and
  // leaves no run behind.
  const validated = await checkForRun(options.jobPath, client, {
    offline: options.offline ?? false,
    ...(options.displayPath ? { displayPath: options.displayPath } : {}),
    ...(options.journalPath ? { journalPath: options.journalPath } : {}),
    ...(options.outDir ? { outDir: path.resolve(options.outDir) } : {}),
    ...(options.jobLimits ? { limits: options.jobLimits } : {}),
    ...(options.onJobLoaded ? { onLoaded: options.onJobLoaded } : {}),
    // Not even the contracts' read (a machine without their cache) goes out
    // before a Retry-After a killed run persisted, here or on another machine.
    // The unfinished run's first items to drive are kept whole by the check.
    beforeService: (loaded) =>
      readUnfinishedRun(
        options.journalPath ?? defaultJournalPath(loaded.dir),
        loaded.name,
        options.gate,
      ),
  });
  const { job, items } = validated;
  items.onScanAgain = (wanted) =>
    logger.debug({ items: wanted }, `scanning the job file again for ${wanted} whole item(s)`);
  assertFreshSteps(options.fresh, job.steps);
  // A folder that cannot take the files fails now, before anything is spent.
  assertWritableFolder(options.outDir ? path.resolve(options.outDir) : job.output);
  for (const warning of validated.warnings) logger.warn({ path: warning.path }, warning.message);
  const files = await prepareJobFiles(job, items.mediaRefs);
  items.identify(files);
  // Read now, as the items were: what the run's end records its facts under.
  const inputs = namesOwnFiles(job, files.byPath.keys()) ? undefined : await inputFingerprint(job);
  // The key and the service answer one authenticated read before the journal
  // opens: a refused key (exit 5) or a service that does not answer records
  // no run, leaves an interrupted run as it was and creates no journal file.
  // The model list may have come from the cache, so validation proved neither.
  const journalPath = options.journalPath ?? defaultJournalPath(job.dir);
  await client.getAccount(options.signal ? { signal: options.signal } : {});
  // The lock is the job's: other jobs may share the journal meanwhile.
  const journal = await openJournal(journalPath, {
    job: job.name,
    wait: options.waitForLock ?? false,
    ...(options.signal ? { signal: options.signal } : {}),
    onLockWait: (holder) =>
      logger.info(
        holderLogFields(holder),
        `waiting for ${holder ? `process ${holder.pid} on ${holder.hostname}` : 'another process'} to release the journal`,
      ),
  });
  // Another journal may be running this job into the same folder: its lock
  // there refuses (or, with --wait, waits for) this run before anything is
  // adopted or spent. Taken after the journal's, always in that order.
  const folders = new OutputFolderLocks({
    job: job.name,
    journalPath,
    wait: options.waitForLock ?? false,
    ...(options.signal ? { signal: options.signal } : {}),
    logger,
  });
  try {
    await folders.hold(options.outDir ? path.resolve(options.outDir) : job.output);
    // What the job names on the service must be there before the first create.
    const influencers = new InfluencerDirectory(client, options.signal);
    await validated.preflight.check({ service: client.baseUrl, influencers, journal });
    // Asked for all or nothing: the plan's total must fit before a run is recorded.
    if (options.allOrNothing ?? job.allOrNothing) await assertNextRunFits(options, validated);
    const protectedPaths = [
      ...journalFiles(journalPath),
      ...jobInputPaths(job),
      ...files.byPath.keys(),
    ];
    return await converge({
      options,
      journal,
      validated,
      files,
      logger,
      protectedPaths,
      influencers,
      folders,
      inputFingerprint: inputs,
    });
  } finally {
    folders.release();
    journal.close();
  }
}

/**
 * Pauses `gate` until the Retry-After the job's unfinished run persisted, and
 * returns the keys of the items that run drives first (`FIRST_BATCH`) and of
 * those whose outputs it downloads first, read from the journal without
 * writing it (a refused key must leave no trace).
 * A journal that cannot be read here is reported when the writer opens it.
 */
async function readUnfinishedRun(
  journalPath: string,
  jobName: string,
  gate: RunJobOptions['gate'],
): Promise<ReadonlySet<string> | undefined> {
  // A journal this process may not write is the writer's to report, below.
  if (!journalWritable(journalPath)) return undefined;
  let journal: Journal | undefined;
  try {
    journal = await openJournalIfAny(journalPath);
    if (!journal) return undefined;
    const run = journal.findUnfinishedRun(jobName);
    const wait = persistedWait(run?.notBefore);
    if (wait !== undefined) gate.pauseUntil(wait);
    if (!run) return undefined;
    // The items it drives first, and those whose outputs it downloads first
    // (left by the kill): asked for whole before its first create.
    const downloads = withoutFailedItems(journal, outputsLeftToDownload(journal, run.runId));
    return new Set([
      ...journal.firstUnendedItemKeys(run.runId, FIRST_BATCH),
      ...downloads.map((output) => output.itemKey),
    ]);
  } catch {
    // Left to openJournal below, which names the problem.
    return undefined;
  } finally {
    journal?.close();
  }
}

export interface Invocation {
  readonly options: RunJobOptions;
  readonly journal: Journal;
  readonly validated: LeanJob;
  readonly files: Files;
  readonly logger: Logger;
  readonly protectedPaths: readonly string[];
  /** The account's influencers, as the preflight read them. */
  readonly influencers: InfluencerDirectory;
  /** The output folders this invocation holds for the job (output-folder-lock.ts). */
  readonly folders: OutputFolderLocks;
  /** `inputFingerprint` of the job as it was expanded; undefined when its items name local files. */
  readonly inputFingerprint: string | undefined;
}

/**
 * Runs until the journal matches the job file or a run stops: usually one
 * run; a second when a resumed run had items the job file changed after they
 * were paid for (finished as sent, then made as the job now says).
 * In the run chain (docs/glossary.md): it adds what is the same for every run of
 * the invocation (the run snapshot, the service move, adopting a lost
 * journal) and what spans runs (settled runs, `--max-spend` spent so far).
 * Its own function because `runJob` holds the locks around it and
 * `driveRun` sees one run only; the loop over runs belongs to neither.
 */
async function converge(inv: Invocation): Promise<RunResult> {
  const { options, journal, validated, files } = inv;
  const { job, catalog, items } = validated;
  const outputDir = options.outDir ? path.resolve(options.outDir) : job.output;
  const service = canonicalServiceUrl(options.client.baseUrl);
  const scope = scopeOf(service, options.accountFingerprint);
  const contracts = contractHashes(catalog, items.modelIds);
  const snapshot = {
    service,
    scope,
    outputDir,
    host: thisMachine(),
    limits: options.limits,
    contracts,
    ...(options.inProcessEmulator ? { served: IN_PROCESS_EMULATOR } : {}),
  };
  moveToService(journal, job.name, snapshot, options, inv.logger);
  // A lost journal: what the output folder's manifest shows made is done.
  await adoptLostJournal(journal, job, items.items, {
    outputDir,
    service,
    scope,
    jobItems: items.jobItems,
    identity: identityOf(job, files),
    files,
    influencers: inv.influencers,
    logger: inv.logger,
    snapshot,
  });
  const settled = new Set<string>();
  const spent = { before: 0 };
  let last: RunResult | undefined;
  for (;;) {
    const selection = selectRun(journal, job, items, {
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(settled.size === 0 && options.fresh ? { fresh: freshSteps(options.fresh) } : {}),
      settledRuns: settled,
      snapshot,
      catalog,
      trainings: (makes) => trainingsToSeed(job, makes),
    });
    if (selection.kind === 'nothing') {
      return last ?? (await nothingToDo(inv, selection, outputDir));
    }
    const { runId } = selection.run;
    const spendCap = capFor(journal, runId, options.maxSpend, spent.before);
    // A run never changes folder midway (run-folder.ts): a resumed one finishes where it started.
    const runDir = runOutputDir(journal, selection.run, outputDir, inv.logger);
    await inv.folders.hold(runDir.path);
    markRunning(journal, runId);
    try {
      last = await driveRun({
        ...inv,
        selection,
        outputDir: runDir.path,
        folderMoved: runDir.moved,
        contracts,
        spendCap,
        scope,
      });
    } catch (error) {
      // After the journal's disk failed, whatever escaped is its consequence.
      const cause = journal.fault ?? error;
      recordEscapedStop(journal, runId, cause, inv.logger);
      throw cause;
    }
    settled.add(runId);
    if (spendCap) spent.before += journal.committedCredits(runId) - spendCap.baseline;
    const stopped = last.exitCode !== EXIT.ok && last.exitCode !== EXIT.itemsFailed;
    if (stopped || selection.deferred === 0) return last;
  }
}

/** `--max-spend` as a ceiling on one run's committed credits (what earlier runs of this invocation left). */
function capFor(
  journal: Journal,
  runId: string,
  maxSpend: number | undefined,
  spentBefore: number,
): RunSpendCap | undefined {
  if (maxSpend === undefined) return undefined;
  const baseline = journal.committedCredits(runId);
  return { maxSpend, baseline, runLimit: baseline + maxSpend - spentBefore };
}

/**
 * The job's unfinished run on another service: refused (exit 2, both named)
 * before anything is adopted or spent, or, with `--service-moved`, moved to
 * this service so its keys are resumed here and its spend counts here.
 */
function moveToService(
  journal: Journal,
  jobName: string,
  target: { readonly service: string; readonly scope: string },
  options: Pick<RunJobOptions, 'runId' | 'serviceMoved'>,
  logger: Logger,
): void {
  const named =
    options.runId === undefined ? undefined : runIdFamily(journal, options.runId).at(-1);
  // `--run-id` names the run to resume wherever it was made (docs/ci.md): it moves too.
  const run = assertSameService(journal, jobName, target, {
    moved: (options.serviceMoved ?? false) || named !== undefined,
    ...(named ? { open: named } : {}),
  });
  if (!run) return;
  const from = serviceOfRun(run);
  logger.info(
    { runId: run.runId, from, to: target.service },
    `the service moved (--service-moved): run ${run.runId} resumes on ${target.service} (was ${from}) with the same idempotency keys`,
  );
  journal.setRunService(run.runId, target.service, target.scope);
}
