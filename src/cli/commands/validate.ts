/**
 * `ibatch validate JOB`: checks the job file and every item's input against
 * the model contracts. Never spends credits: the only request is GET /models
 * (none with `--offline`, which reads the cached contracts).
 */
import { defaultJournalPath } from '../../job/index.js';
import { checkBeforeSpending } from '../../scheduler/index.js';
import {
  checkJob,
  printWarnings,
  reportJobErrors,
  type ValidateCommandOptions,
} from '../check-job.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { addCommonOptions, addJobLimitOptions, journalOption } from '../options.js';
import { openService } from '../service.js';

export const validateCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      addJobLimitOptions(
        withExamples(program.command('validate'), [
          ['validate campaign.yaml', 'every mistake of the file at once, with file:line:col'],
          ['validate campaign.yaml --emulator', "against the built-in emulator's models"],
          ['validate campaign.yaml --offline --json', 'cached contracts, no request; JSON'],
        ]),
      )
        .argument('<job>', 'job file (YAML)')
        .option(
          '--offline',
          'use the cached model contracts (.ibatch/models.json); no request at all',
        )
        .description(
          'check a job file and every input against the model contracts (never spends credits)',
        ),
    ).action(async (jobPath: string, options: ValidateCommandOptions) => {
      try {
        // Online, what `run` checks before spending is checked too (items noted as scanned).
        const { checked, service, preflight } = await checkJob(io, jobPath, options, () =>
          openService(io, options),
        );
        try {
          if (service && preflight) {
            const journal =
              journalOption(io, {}).journalPath ?? defaultJournalPath(checked.job.dir);
            await checkBeforeSpending(preflight, service.client, journal);
          }
        } finally {
          await service?.close();
        }
        const { job, scan } = checked;
        const { warnings } = scan;
        printWarnings(io, warnings, job.source.text);
        const items = scan.steps.reduce((sum, step) => sum + step.items, 0);
        const outputs = scan.steps.reduce((sum, step) => sum + step.outputs, 0);
        if (options.json) {
          const steps = scan.steps.map(({ id, items, outputs }) => ({ id, items, outputs }));
          io.stdout.write(
            `${JSON.stringify({ valid: true, name: job.name, items, outputs, steps, warnings })}\n`,
          );
          return;
        }
        io.stdout.write(
          `${jobPath}: valid (${job.steps.length} step${job.steps.length === 1 ? '' : 's'}, ${items} items, ${outputs} outputs)\n`,
        );
      } catch (error) {
        if (!reportJobErrors(io, error, options.json)) throw error;
      }
    });
  },
};
