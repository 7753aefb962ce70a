/**
 * `ibatch status [JOB.yaml|RUN_ID]`: progress and spend of runs, from the
 * journal alone. Opens it read-only (no lock, no network), so it works while
 * a run holds the journal and when the service is unreachable.
 * Which journal: src/cli/status-target.ts.
 */
import { type LoadedJob, loadJob } from '../../job/index.js';
import { type Journal, openJournal } from '../../journal/index.js';
import { describedKeysOf, knownFromJournal } from '../../library/index.js';
import { printableLines, redactDeep } from '../../shared/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { trainingEstimateOption } from '../options.js';
import { resolveTarget } from '../status-target.js';
import { buildStatus, type JobFileFacts, renderStatus } from '../status-view.js';

interface StatusOptions {
  readonly journal?: string;
  readonly json?: boolean;
}

export const statusCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('status'), [
      ['status', 'every run of the journal in this folder'],
      ['status campaign.yaml', 'the newest run of this job: progress, spend, failures'],
      ['status 20260301-101500-123-abc123 --json', 'one run, as JSON'],
    ])
      .description('progress and spend of runs, from the journal (works offline; spends nothing)')
      .argument('[job-or-run]', 'job file (YAML) or run id; default: every run of the journal')
      .option(
        '--journal <path>',
        'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job / in the cwd)',
      )
      .option('--json', 'print one JSON document on stdout')
      .action(async (target: string | undefined, options: StatusOptions) => {
        const resolved = resolveTarget(io, target, options.journal);
        const journal = await openJournal(resolved.journalPath, { readonly: true });
        try {
          const jobFile = resolved.jobPath
            ? await jobFileFacts(resolved.jobPath, journal)
            : undefined;
          const doc = buildStatus(journal, {
            ...(resolved.jobName ? { jobName: resolved.jobName } : {}),
            ...(resolved.runId ? { runId: resolved.runId } : {}),
            ...(jobFile ? { jobFile } : {}),
            ...trainingEstimateOption(io),
          });
          // Error texts in the journal can quote the service (one written before 13.5 too).
          const clean = redactDeep(doc);
          io.stdout.write(
            // A person's view quotes labels and errors: their control characters escaped.
            options.json
              ? `${JSON.stringify(clean, null, 2)}\n`
              : printableLines(renderStatus(clean)),
          );
        } finally {
          journal.close();
        }
      });
  },
};

/**
 * The job file's budget and its items' keys (the items no longer in it are
 * listed), expanded offline with the cached model contracts: status sends
 * nothing. A file that no longer loads leaves the run's budget in place.
 * An unchanged job file is not expanded: what its newest run recorded of it
 * holds (`knownFromJournal`).
 */
async function jobFileFacts(jobPath: string, journal: Journal): Promise<JobFileFacts | undefined> {
  let job: LoadedJob;
  try {
    job = loadJob(jobPath, { readsOutputsOnly: true });
  } catch {
    return undefined;
  }
  const facts = {
    budget: job.budget ?? null,
    ...(job.trainingEstimate !== undefined ? { trainingEstimate: job.trainingEstimate } : {}),
  };
  const known = await knownFromJournal(job, journal);
  if (known) return { ...facts, known };
  const described = await describedKeysOf(job);
  return described.keys
    ? { ...facts, keys: described.keys, identities: described.identities }
    : { ...facts, keysUnknown: described.why };
}
