/**
 * The whole `plan` command: quotes what the next `run` would do given the
 * journal. `plan` and `run --dry-run` both run it.
 */
import path from 'node:path';
import { defaultJournalPath } from '../job/index.js';
import { formatPlan, planJson } from '../plan/index.js';
import { PlanItems, planNextRun, recordedItems } from '../scheduler/index.js';
import { EXIT, printableLines } from '../shared/index.js';
import { checkJob, printWarnings, reportJobErrors } from './check-job.js';
import type { CliIo } from './command.js';
import {
  type CommonOptions,
  freshOption,
  type JobLimitOptions,
  journalOption,
  type NextRunOptions,
  trainingEstimateOption,
} from './options.js';
import { openService } from './service.js';

export type PlanCommandOptions = CommonOptions & JobLimitOptions & NextRunOptions;

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
        journalPath = journalPath ?? path.resolve(defaultJournalPath(job.dir));
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
