/**
 * `ibatch run JOB`: runs the job, resuming its unfinished run from the
 * journal. The first SIGINT/SIGTERM/SIGHUP stops creating and exits 130 once
 * the journal is consistent and the lock released; the run resumes with the
 * same command.
 */
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { Option } from 'commander';
import { type Bucket, type RateLimits, SERVICE_RATE_LIMITS } from '../../contract/index.js';
import { type RunDelivery, resumeCommand } from '../../library/index.js';
import { parseLimitsSpec } from '../../limits/index.js';
import { formatPlan, PlanDoesNotFitError, planJson } from '../../plan/index.js';
import { RESUME_AFTER_INTERRUPT, type RunResult } from '../../scheduler/index.js';
import { InterruptedError, printable, redactDeep } from '../../shared/index.js';
import { reportJobErrors } from '../check-job.js';
import type { CommandModule } from '../command.js';
import { describeDelivery } from '../delivery-view.js';
import { withExamples, withRunReference } from '../help.js';
import {
  addCommonOptions,
  addJobLimitOptions,
  addNextRunOptions,
  type CommonOptions,
  freshOption,
  type JobLimitOptions,
  jobLimitsOf,
  journalOption,
  type NextRunOptions,
  notifyFlag,
  positiveNumber,
  s3UrlValue,
  trainingEstimateOption,
  useColor,
} from '../options.js';
import { planCommandAction } from '../plan-action.js';
import { progressRenderer } from '../progress.js';
import { openService } from '../service.js';

interface RunOptions extends CommonOptions, JobLimitOptions, NextRunOptions {
  readonly out?: string;
  readonly dryRun?: boolean;
  readonly limits?: string;
  readonly limitsStore?: string;
  readonly share: number;
  readonly wait?: boolean;
  readonly offline?: boolean;
  readonly timeScale: number;
  readonly notify?: string[];
  readonly deliver?: string;
  readonly forgetLost?: boolean;
  readonly allOrNothing?: boolean;
}

/**
 * Signals that interrupt a run (status `interrupted`, exit 130, lock
 * released). SIGHUP (terminal closed, `kill -HUP`) counts as one too: Node's
 * default would end the process at once with 129, leaving the run `running`
 * and its lock file behind. A second SIGINT/SIGTERM gets Node's default (ends
 * at once: the user insists); a second SIGHUP is ignored, since a closed
 * terminal sends it twice (the kernel to the foreground group, the shell to
 * its jobs) and nobody asked for it. Returns the function that stops listening.
 */
function onStopSignals(handler: () => void): () => void {
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  process.on('SIGHUP', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
    process.off('SIGHUP', handler);
  };
}

/**
 * With --emulator the demo runs faster: the in-process emulator and our
 * default limits are scaled together, so they always agree. (`ibatch
 * emulator` defaults to 1: a `run --base-url` against it has unscaled limits.)
 */
const DEFAULT_EMULATOR_TIME_SCALE = 10;

export const runCommand: CommandModule = {
  register(program, io) {
    const command = addCommonOptions(
      addNextRunOptions(addJobLimitOptions(program.command('run')))
        .description('run a job (spends credits), resuming its unfinished run from the journal')
        .argument('<job>', 'job file (YAML)')
        .option('--out <dir>', "output folder (overrides the job's `output`)")
        .option('--dry-run', 'quote the job like `plan`; spend nothing')
        .option(
          '--all-or-nothing',
          "start only when plan's total fits the budget left, --max-spend and the balance; else exit 3, nothing spent (default: the job's allOrNothing)",
        )
        .option(
          '--limits <spec>',
          'rate limits, e.g. requests=120/60s,generations=20/60s (default: $IBATCH_LIMITS)',
        )
        .option(
          '--limits-store <url>',
          'share the limits through Redis: redis://HOST:PORT (default: $IBATCH_REDIS_URL)',
        )
        .addOption(
          new Option(
            '--share <n>',
            "with --limits-store: this runner's weight in the shared limits (2: about twice the slots of a share-1 runner while both wait)",
          )
            .argParser(positiveNumber('--share'))
            .default(1),
        )
        .option(
          '--wait',
          'wait for another run of the job (same journal, or same output folder) instead of failing',
        )
        .option('--offline', 'use cached model contracts only')
        .option(
          '--forget-lost',
          'generations and trainings this service answers 404 for (it lost them) are recorded as failed, their charge kept, and made again under new keys',
        )
        .option(
          '--deliver <url>',
          "then copy the outputs and the manifest to s3://BUCKET/PREFIX (overrides the job's `deliver:`)",
          s3UrlValue('--deliver'),
        )
        .addOption(
          new Option(
            '--notify <url>',
            "POST the run's end (finished or stopped) to url; repeatable, adds to the job's notify:",
          ).argParser(notifyFlag),
        )
        .addOption(
          new Option(
            '--time-scale <n>',
            'with --emulator: divide its windows and latencies, and our default limits, by n (10: a quick demo, both sides scaled alike)',
          )
            .argParser(positiveNumber('--time-scale'))
            .default(DEFAULT_EMULATOR_TIME_SCALE),
        ),
    );
    withRunReference(
      withExamples(command, [
        ['run campaign.yaml', 'make what is missing; run it again to resume'],
        ['run jobs/quickstart.yaml --emulator', 'on the built-in emulator, nothing spent'],
        ['run campaign.yaml --max-spend 200', 'commit at most 200 credits now (exit 3 at the cap)'],
        ['run campaign.yaml --run-id "$CI_PIPELINE_ID"', 'keys a retried CI job reuses'],
        ['run campaign.yaml --fresh portraits', 'make the portraits again, new keys'],
        ['run campaign.yaml --dry-run', 'quote it like plan; spend nothing'],
        ['run campaign.yaml --all-or-nothing', 'start only if the whole run fits (exit 3 if not)'],
        ['run campaign.yaml --notify https://hooks.slack.com/…', 'a Slack message when it ends'],
      ]),
    );
    command.action(async (job: string, options: RunOptions) => {
      if (options.dryRun) {
        await planCommandAction(io, job, options);
        return;
      }
      const scale = options.emulator ? options.timeScale : 1;
      const limits = resolveLimits(options.limits ?? io.env.IBATCH_LIMITS, scale);
      const abort = new AbortController();
      setMaxListeners(0, abort.signal); // every in-flight request listens on it
      // The reason is what every waiting call rethrows (the lock wait, start-up
      // requests): an InterruptedError exits 130 with one line, no stack.
      const onSignal = () =>
        abort.abort(new InterruptedError(`interrupted. ${RESUME_AFTER_INTERRUPT}`));
      const offSignals = onStopSignals(onSignal);
      const renderer = progressRenderer(io.stderr, { color: useColor(io.stderr, io.env) });
      const service = await openService(io, {
        ...options,
        logDestination: renderer.logStream,
        // The summary on stdout starts with the run's end message: said once.
        ...(options.json ? {} : { prettyOmits: ['run.finished', 'run.nothing_to_do'] }),
        emulatorTimeScale: scale,
        signal: abort.signal,
        limits,
        limitsStore: options.limitsStore ?? io.env.IBATCH_REDIS_URL,
        share: options.share,
      }).catch((error: unknown) => {
        offSignals();
        throw error;
      });

      try {
        await service.run(path.resolve(io.cwd, job), {
          displayPath: job,
          ...journalOption(io, options),
          ...(options.runId !== undefined ? { runId: options.runId } : {}),
          ...freshOption(options),
          ...(options.maxSpend !== undefined ? { maxSpend: options.maxSpend } : {}),
          ...(options.allOrNothing ? { allOrNothing: true } : {}),
          ...(options.serviceMoved ? { serviceMoved: true } : {}),
          ...(service.emulator ? { inProcessEmulator: true } : {}),
          ...trainingEstimateOption(io),
          ...(options.out ? { outDir: path.resolve(io.cwd, options.out) } : {}),
          waitForLock: options.wait ?? false,
          ...(options.forgetLost ? { forgetLost: true } : {}),
          offline: options.offline ?? false,
          jobLimits: jobLimitsOf(options),
          signal: abort.signal,
          logger: service.logger,
          onEvent: (event) => renderer.onEvent(event),
          ...(options.deliver ? { deliverTo: options.deliver } : {}),
          ...(options.notify ? { notify: options.notify } : {}),
          env: io.env,
          resumeCommand: resumeCommand(job, options),
          onEnd: (end) => {
            // A signal now ends the process at once (Node's default): the user
            // who presses ^C during the notifications does not wait for them.
            offSignals();
            if ('error' in end) return;
            report(
              io,
              { ...end.result, exitCode: end.exitCode },
              end.delivery,
              options.json ?? false,
            );
            io.exitCode = end.exitCode;
          },
        });
      } catch (error) {
        // All or nothing refused: the plan's figures, as `plan` prints them.
        if (error instanceof PlanDoesNotFitError) {
          const { plan, jobName } = error;
          io.stdout.write(
            options.json ? `${JSON.stringify(planJson(plan))}\n` : formatPlan(plan, jobName),
          );
        }
        if (!reportJobErrors(io, error, options.json)) throw error;
      } finally {
        offSignals();
        renderer.close();
        await service.close();
      }
    });
  },
};

function resolveLimits(spec: string | undefined, scale: number): RateLimits {
  if (spec) return parseLimitsSpec(spec);
  const scaled = {} as Record<Bucket, { count: number; windowMs: number }>;
  for (const [bucket, window] of Object.entries(SERVICE_RATE_LIMITS) as [
    Bucket,
    RateLimits[Bucket],
  ][]) {
    scaled[bucket] = { count: window.count, windowMs: window.windowMs / scale };
  }
  return scaled;
}

function report(
  io: Parameters<CommandModule['register']>[1],
  result: RunResult,
  delivery: RunDelivery | null,
  json: boolean,
): void {
  // The message can quote the service (a stop reason) and the job's values:
  // redacted like every sink, and escaped for a terminal.
  if (json) {
    io.stdout.write(`${JSON.stringify(redactDeep(delivery ? { ...result, delivery } : result))}\n`);
    if (delivery && 'error' in delivery)
      io.stderr.write(`ibatch: ${printable(delivery.error.message)}\n`);
    return;
  }
  const { counts, spend } = result;
  // Short lines: an 80-column terminal shows each on one row.
  io.stdout.write(
    `${printable(result.message)}\n` +
      `run ${result.runId || '(none)'}\n` +
      `items: ${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.blocked} blocked, ${counts.skipped} skipped, ${counts.pending} pending${result.done ? `; ${result.done} already done` : ''}\n` +
      `credits: ${spend.net} net (${spend.charged} charged, ${spend.refunded} refunded)${result.budget === null ? '' : ` of ${result.budget} budget`}\n` +
      `outputs: ${printable(shownPath(io.cwd, result.outputDir))} (manifest.jsonl, manifest.csv, ${result.report ? printable(path.basename(result.report)) : 'report.html'})\n`,
  );
  if (!delivery) return;
  if ('error' in delivery) io.stderr.write(`ibatch: ${printable(delivery.error.message)}\n`);
  else io.stdout.write(`${describeDelivery(delivery)}\n`);
}

/** `dir` as a person finds it from `cwd`: relative when inside it (shorter), else absolute. */
function shownPath(cwd: string, dir: string): string {
  const relative = path.relative(cwd, dir);
  if (relative === '') return '.';
  return relative.startsWith('..') || path.isAbsolute(relative) ? dir : relative;
}
