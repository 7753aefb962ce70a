/**
 * `ibatch plan JOB`: quotes what the next `run` would do given the journal
 * (new, changed and failed items, trainings; done items and reused
 * influencers cost nothing) with preview-credits (never charges), and prints
 * it per step with the total against the budget left, `--max-spend` and the
 * live balance. Exit 3 when it does not fit, 2 when the job is invalid.
 */
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { addCommonOptions, addJobLimitOptions, addNextRunOptions } from '../options.js';
import { type PlanCommandOptions, planCommandAction } from '../plan-action.js';

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
