/**
 * `ibatch plan JOB`: expands the job, quotes it with preview-credits (never
 * charges) and prints cost per step and the total against the budget and the
 * live balance. Exit 3 when it does not fit, 2 when the job is invalid.
 */
import { formatPlan, PriceClasses, planJson, quotePriceClasses } from '../../plan/index.js';
import { EXIT } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import {
  addCommonOptions,
  addJobLimitOptions,
  type CommonOptions,
  type JobLimitOptions,
} from '../options.js';
import { openService } from '../service.js';
import { checkJob, printWarnings, reportJobErrors } from './validate.js';

export const planCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      addJobLimitOptions(program.command('plan'))
        .argument('<JOB>', 'job file (YAML)')
        .description(
          'quote a job with preview-credits: cost per step, total, budget, balance (never spends credits)',
        ),
    ).action((jobPath: string, options: CommonOptions & JobLimitOptions) =>
      planCommandAction(io, jobPath, options),
    );
  },
};

/** The whole `plan` command; `run --dry-run` calls it too. */
export async function planCommandAction(
  io: CliIo,
  jobPath: string,
  options: CommonOptions & JobLimitOptions,
): Promise<void> {
  try {
    let classes: PriceClasses | undefined;
    const { checked, service } = await checkJob(
      io,
      jobPath,
      options,
      () => openService(io, options),
      (catalog) => {
        const grouping = new PriceClasses(catalog);
        classes = grouping;
        return (item) => grouping.add(item);
      },
    );
    if (!service) throw new Error('plan needs the service');
    try {
      const { job, catalog, scan } = checked;
      printWarnings(io, scan.warnings, job.source.text);
      const plan = await quotePriceClasses(
        job,
        classes ?? new PriceClasses(catalog),
        service.client,
      );
      io.stdout.write(
        options.json ? `${JSON.stringify(planJson(plan))}\n` : formatPlan(plan, job.name),
      );
      if (plan.verdict !== 'ok') io.exitCode = EXIT.credits;
    } finally {
      await service.close();
    }
  } catch (error) {
    if (!reportJobErrors(io, error, options.json)) throw error;
  }
}
