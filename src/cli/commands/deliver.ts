/**
 * `ibatch deliver JOB.yaml`: copies the job's current (or approved) outputs
 * and their manifest to S3-compatible storage again, without running
 * anything (no service call, no API key): what a delivery stopped by the
 * store left undone, or the whole set to a new place (docs/deliver.md).
 * `run --deliver` / `deliver:` in the job call `deliverJob` after a run.
 */
import path from 'node:path';
import {
  type DeliveryResult,
  deliverOutputs,
  type ObjectStore,
  openS3Store,
  parseS3Url,
  s3UrlProblem,
} from '../../deliver/index.js';
import { defaultJournalPath, loadJob } from '../../job/index.js';
import { openJournal } from '../../journal/index.js';
import { chosenRows, newestRunOf, outputRows } from '../../review/index.js';
import { recordedOutputDir } from '../../scheduler/index.js';
import { type Logger, redactDeep, UsageError } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import { describedKeysOf } from '../described-items.js';
import { withExamples } from '../help.js';
import { journalOption } from '../options.js';
import { shellQuote } from '../resume-command.js';
import { reportJobErrors } from './validate.js';

export interface DeliverRequest {
  /** The job file, absolute. */
  readonly jobPath: string;
  /** The job file as the user named it (for the resume hint). */
  readonly displayPath: string;
  readonly journalPath?: string;
  /** `--out`: the output folder, else the one the newest run recorded, else the job's. */
  readonly outDir?: string;
  /** `--deliver` / `--to`: overrides the job's `deliver.to`. */
  readonly to?: string;
  /** `--approved`; else the job's `deliver.approved`. */
  readonly approved?: boolean;
  /** Ask the store about objects the journal shows delivered too. */
  readonly verify: boolean;
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
}

/** Delivers the job's outputs; undefined when neither the request nor the job names a destination. */
export async function deliverJob(
  io: CliIo,
  request: DeliverRequest,
): Promise<DeliveryResult | undefined> {
  const job = loadJob(request.jobPath, { readsOutputsOnly: true });
  const to = request.to ?? job.deliver?.to;
  if (to === undefined) return undefined;
  const destination = parseS3Url(to);
  const { keys: described } = await describedKeysOf(job);
  const journal = await openJournal(request.journalPath ?? defaultJournalPath(job.dir), {
    job: job.name,
  });
  let store: ObjectStore | undefined;
  try {
    const run = newestRunOf(journal, job.name);
    const outputDir = request.outDir ?? recordedOutputDir(run) ?? job.output;
    const approvedOnly = request.approved === true || job.deliver?.approved === true;
    store = await openS3Store({ env: io.env });
    return await deliverOutputs({
      journal,
      jobName: job.name,
      rows: chosenRows(outputRows(journal, job.name, outputDir, described), approvedOnly),
      outputDir,
      destination,
      store,
      approvedOnly,
      verify: request.verify,
      resume: [
        'ibatch deliver',
        shellQuote(request.displayPath),
        ...(request.to ? ['--to', shellQuote(destination.url)] : []),
      ].join(' '),
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.logger ? { logger: request.logger } : {}),
    });
  } finally {
    journal.close();
    store?.close();
  }
}

/** `--deliver` / `--to` values: an `s3://BUCKET/PREFIX` URL, else exit 2 naming the flag. */
export function s3UrlValue(flag: string): (value: string) => string {
  return (value) => {
    const problem = s3UrlProblem(value);
    if (problem) throw new UsageError(`\`${flag}\` ${problem}`);
    return value;
  };
}

/** One line for a person: where, how many, what was sent now. */
export function describeDelivery(result: DeliveryResult): string {
  const what = result.approvedOnly ? 'approved output(s)' : 'output(s)';
  const missing =
    result.missing.length > 0
      ? `; not in the output folder, not delivered: ${result.missing.join(', ')}`
      : '';
  return `delivered: ${result.outputs} ${what} and the manifest to ${result.destination} (${result.sent} object(s) sent, ${result.unchanged} already there)${missing}`;
}

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
          const result = await deliverJob(io, {
            jobPath: path.resolve(io.cwd, job),
            displayPath: job,
            ...journalOption(io, options),
            ...(options.out ? { outDir: path.resolve(io.cwd, options.out) } : {}),
            ...(options.to ? { to: options.to } : {}),
            ...(options.approved ? { approved: true } : {}),
            verify: true,
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
