/**
 * `ibatch plan JOB`: quotes what the next `run` would do given the journal
 * (new, changed and failed items, trainings; done items and reused
 * influencers cost nothing) with preview-credits (never charges), and prints
 * it per step with the total against the budget left, `--max-spend` and the
 * live balance. Exit 3 when it does not fit, 2 when the job is invalid.
 */
import path from 'node:path';
import { defaultJournalPath } from '../../job/index.js';
import { formatPlan, planJson } from '../../plan/index.js';
import { PlanItems, planNextRun, recordedItems } from '../../scheduler/index.js';
import { EXIT, printableLines } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import {
  addCommonOptions,
  addJobLimitOptions,
  addNextRunOptions,
  type CommonOptions,
  freshOption,
  type JobLimitOptions,
  journalOption,
  type NextRunOptions,
  trainingEstimateOption,
} from '../options.js';
import { openService } from '../service.js';
import { checkJob, printWarnings, reportJobErrors } from './validate.js';

type PlanCommandOptions = CommonOptions & JobLimitOptions & NextRunOptions;

export const planCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      addNextRunOptions(
        addJobLimitOptions(
          withExamples(program.command('plan'), [
            ['plan campaign.yaml', 'what the next run would make, and its cost'],
            ['plan campaign.yaml --fresh portraits', 'the cost of making the portraits again'],
            ['plan campaign.yaml --json', 'the quote as one JSON document'],
          ]),
        ),
      )
        .argument('<job>', 'job file (YAML)')
        .description(
          'quote what the next run would do, given the journal: per step new / changed / retry / done / removed, total with trainings, budget, balance (never spends credits)',
        ),
    ).action((jobPath: string, options: PlanCommandOptions) =>
      planCommandAction(io, jobPath, options),
    );
  },
};

/** The whole `plan` command; `run --dry-run` calls it too. */
export async function planCommandAction(
  io: CliIo,
  jobPath: string,
  options: PlanCommandOptions,
): Promise<void> {
  try {
    // The decision compares every item with the journal: lean records of them
    // are kept, and what the journal records is read first (plan-items.ts).
    let items: PlanItems | undefined;
    let journalPath = journalOption(io, options).journalPath;
    const { checked, service, preflight } = await checkJob(
      io,
      jobPath,
      options,
      () => openService(io, options),
      async (job, catalog, opened) => {
        journalPath = path.resolve(journalPath ?? defaultJournalPath(job.dir));
        const recorded = opened
          ? await recordedItems(journalPath, job.name, opened.client.baseUrl)
          : undefined;
        const planItems = new PlanItems(job, catalog, recorded);
        items = planItems;
        return (item) => planItems.add(item);
      },
    );
    if (!service || !preflight || !items) throw new Error('plan needs the service');
    try {
      const { job, catalog, scan } = checked;
      printWarnings(io, scan.warnings, job.source.text);
      const plan = await planNextRun(
        {
          job,
          catalog,
          items,
          preflight,
          client: service.client,
          accountFingerprint: service.accountFingerprint,
          ...(journalPath ? { journalPath } : {}),
          ...freshOption(options),
          ...(options.runId !== undefined ? { runId: options.runId } : {}),
          ...(options.maxSpend !== undefined ? { maxSpend: options.maxSpend } : {}),
          ...(options.serviceMoved ? { serviceMoved: true } : {}),
        },
        { requests: service.limits.requests, ...trainingEstimateOption(io) },
      );
      io.stdout.write(
        options.json
          ? `${JSON.stringify(planJson(plan))}\n`
          : printableLines(formatPlan(plan, job.name)),
      );
      if (plan.verdict !== 'ok') io.exitCode = EXIT.credits;
    } finally {
      await service.close();
    }
  } catch (error) {
    if (!reportJobErrors(io, error, options.json)) throw error;
  }
}
