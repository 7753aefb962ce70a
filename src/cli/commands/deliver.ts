/**
 * `ibatch deliver JOB.yaml`: copies the job's current (or approved) outputs
 * and their manifest to S3-compatible storage again, without running
 * anything (no service call, no API key): what a delivery stopped by the
 * store left undone, or the whole set to a new place (docs/deliver.md).
 * `run --deliver` / `deliver:` in the job deliver after a run (src/library).
 */
import path from 'node:path';
import { deliverJob } from '../../library/index.js';
import { redactDeep, UsageError } from '../../shared/index.js';
import { reportJobErrors } from '../check-job.js';
import { cliLogger } from '../cli-logger.js';
import type { CommandModule } from '../command.js';
import { describeDelivery } from '../delivery-view.js';
import { withExamples } from '../help.js';
import { journalOption, s3UrlValue } from '../options.js';

interface DeliverCliOptions {
  readonly to?: string;
  readonly approved?: boolean;
  readonly journal?: string;
  readonly out?: string;
  readonly json?: boolean;
}

export const deliverCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('deliver'), [
      ['deliver campaign.yaml', "send what the job's `deliver:` destination lacks"],
      ['deliver campaign.yaml --to s3://media/spring', 'the current outputs to another place'],
      ['deliver campaign.yaml --approved', 'only the outputs approved in review'],
    ])
      .description('copy the outputs and the manifest to S3-compatible storage (no run, no key)')
      .argument('<job>', 'job file (YAML)')
      .option(
        '--to <url>',
        "destination s3://BUCKET/PREFIX (default: the job's `deliver:`)",
        s3UrlValue('--to'),
      )
      .option('--approved', 'only outputs approved in review')
      .option(
        '--journal <path>',
        'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job)',
      )
      .option('--out <dir>', 'output folder (default: the one the newest run wrote to)')
      .option('--json', 'print one JSON document on stdout')
      .action(async (job: string, options: DeliverCliOptions) => {
        try {
          const result = await deliverJob({
            jobPath: path.resolve(io.cwd, job),
            displayPath: job,
            ...journalOption(io, options),
            ...(options.out ? { outDir: path.resolve(io.cwd, options.out) } : {}),
            ...(options.to ? { to: options.to } : {}),
            ...(options.approved ? { approved: true } : {}),
            verify: true,
            env: io.env,
            // What it warns of (a file gone, a manifest it may not read) reaches the user.
            logger: cliLogger(io),
          });
          if (!result) {
            throw new UsageError(
              `${job} has no \`deliver:\` destination: give one with --to s3://BUCKET/PREFIX`,
            );
          }
          io.stdout.write(
            options.json
              ? `${JSON.stringify(redactDeep(result))}\n`
              : `${describeDelivery(result)}\n`,
          );
        } catch (error) {
          if (!reportJobErrors(io, error, options.json)) throw error;
        }
      });
  },
};
