/**
 * `ibatch costs [JOB.yaml]`: credits spent, from the journal alone (read-only,
 * no network, no API key), grouped `--by` job, step, tag:NAME or UTC day.
 * With a job: its runs on every service; without: every job of the journal.
 * The journal is found as `status` finds it (resolveTarget).
 */
import { type Journal, openJournal, serviceOfRun } from '../../journal/index.js';
import { UsageError } from '../../shared/index.js';
import type { CommandModule } from '../command.js';
import {
  type CostsDocument,
  groupingLabel,
  parseGrouping,
  parseSince,
  renderCostsCsv,
  renderCostsTable,
  type ServiceStanding,
} from '../costs-view.js';
import { withExamples } from '../help.js';
import { useColor } from '../options.js';
import { resolveTarget } from '../status-target.js';

interface CostsOptions {
  readonly by: string;
  readonly since?: string;
  readonly json?: boolean;
  readonly csv?: boolean;
  readonly journal?: string;
}

export const costsCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('costs'), [
      ['costs', 'credits spent by each job of the journal in this folder'],
      [
        'costs --by tag:client --since 2026-03-01',
        "by the jobs' `client` tag, since March 1st (UTC)",
      ],
      [
        'costs campaign.yaml --by day --csv > spend.csv',
        "one job's spend per UTC day, for a spreadsheet",
      ],
    ])
      .description(
        'credits spent, from the journal, by job, step, tag or day (works offline; spends nothing)',
      )
      .argument('[job]', 'job file (YAML); default: every job of the journal')
      .option('--by <group>', 'job, step, tag:NAME or day (UTC date of the charge)', 'job')
      .option('--since <date>', 'only charges at or after this date (YYYY-MM-DD, UTC) or ISO time')
      .option('--json', 'print one JSON document on stdout')
      .option('--csv', 'print CSV (a header row, one row per group, the total last)')
      .option(
        '--journal <path>',
        'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job / in the cwd)',
      )
      .action(async (job: string | undefined, options: CostsOptions) => {
        const group = parseGrouping(options.by);
        const since = options.since === undefined ? undefined : parseSince(options.since);
        if (options.json && options.csv)
          throw new UsageError('Expected `--json` or `--csv`, not both');
        const target = resolveTarget(io, job, options.journal);
        if (target.runId !== undefined) {
          throw new UsageError(`Expected a job file (.yaml), got \`${target.runId}\``);
        }
        const journal = await openJournal(target.journalPath, { readonly: true });
        let doc: CostsDocument;
        try {
          const breakdown = journal.costBreakdown({
            group,
            ...(target.jobName ? { jobName: target.jobName } : {}),
            ...(since !== undefined ? { since } : {}),
          });
          doc = {
            journal: journal.path,
            job: target.jobName ?? null,
            by: groupingLabel(group),
            since: since === undefined ? null : new Date(since).toISOString(),
            ...breakdown,
            ...(target.jobName
              ? { standings: standingsOf(journal, target.jobName, breakdown.services) }
              : {}),
          };
        } finally {
          journal.close();
        }
        if (options.json) io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
        else if (options.csv) io.stdout.write(renderCostsCsv(doc, group));
        else io.stdout.write(renderCostsTable(doc, group, { color: useColor(io.stdout, io.env) }));
      });
  },
};

/**
 * With a job: where it stands against its budget on each service it spent on
 * (the journal's `budgetStanding`, all time: `--since` does not apply), the
 * budget as its newest run there recorded it.
 */
function standingsOf(
  journal: Journal,
  jobName: string,
  services: readonly string[],
): ServiceStanding[] {
  const runs = journal.listRuns(jobName);
  return services.map((service) => {
    const newest = runs.find((run) => serviceOfRun(run) === service);
    return {
      service,
      ...journal.budgetStanding({ name: jobName, budget: newest?.budget ?? null }, service),
    };
  });
}
