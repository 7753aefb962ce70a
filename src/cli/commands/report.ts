/**
 * `ibatch report [RUN_ID] [JOB.yaml]`: rebuilds `manifest.jsonl`,
 * `manifest.csv` and `report.html` of a run from the journal (read-only; no
 * network). Without a run id it takes the newest run (of the job, when one is
 * given). The output folder is the run's own, unless `--out` names another.
 */
import path from 'node:path';
import { openJournal } from '../../journal/index.js';
import { describedItemsOfFile } from '../../library/index.js';
import { recordedOutputDir } from '../../outputs/index.js';
import { writeRunOutputs } from '../../scheduler/index.js';
import { UsageError } from '../../shared/index.js';
import { cliLogger } from '../cli-logger.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { resolveTarget } from '../status-target.js';

interface ReportOptions {
  readonly journal?: string;
  readonly out?: string;
}

export const reportCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('report'), [
      ['report', "rebuild the newest run's report.html and manifest"],
      ['report campaign.yaml', 'the newest run of this job'],
      ['report campaign.yaml --out share/', 'write them into share/ instead'],
    ])
      .description(
        'rebuild report.html (and its report-data/ pages) and the manifest of a run from the journal (spends nothing)',
      )
      .argument('[job-or-run...]', 'job file (YAML) and/or run id; default: the newest run')
      .option(
        '--journal <path>',
        'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job / in the cwd)',
      )
      .option('--out <dir>', "write there instead of the run's output folder")
      .action(async (targets: string[], options: ReportOptions) => {
        if (targets.length > 2) throw new UsageError('Expected at most a run id and a job file');
        const resolved = targets.map((t) => resolveTarget(io, t, options.journal));
        const job = resolved.find((r) => r.jobName !== undefined);
        const runId = resolved.find((r) => r.runId !== undefined)?.runId;
        const journalPath = (job ?? resolved[0] ?? resolveTarget(io, undefined, options.journal))
          .journalPath;
        const journal = await openJournal(journalPath, { readonly: true });
        try {
          const run = runId ? journal.getRun(runId) : journal.listRuns(job?.jobName, 1)[0];
          if (!run) {
            throw new UsageError(
              runId
                ? `No run ${runId} in the journal ${journal.path}`
                : `No run${job?.jobName ? ` of job "${job.jobName}"` : ''} in the journal ${journal.path}`,
            );
          }
          if (job?.jobName && run.jobName !== job.jobName) {
            throw new UsageError(
              `run ${run.runId} belongs to job "${run.jobName}", not "${job.jobName}"`,
            );
          }
          const outputDir = options.out
            ? path.resolve(io.cwd, options.out)
            : recordedOutputDir(run);
          if (!outputDir)
            throw new UsageError(`run ${run.runId} has no output folder recorded: pass --out DIR`);
          // With the job file: the items it describes now decide the retired rows.
          const described = job?.jobPath
            ? await describedItemsOfFile(job.jobPath, journal)
            : undefined;
          // A wait for another process's change of the manifest says so.
          const logger = cliLogger(io);
          const { rows, report } = writeRunOutputs(journal, run.runId, outputDir, {
            ...(described ? { described } : {}),
            logger,
          });
          io.stdout.write(`${report}\n`);
          io.stderr.write(`ibatch: run ${run.runId}: ${rows} manifest row(s) in ${outputDir}\n`);
        } finally {
          journal.close();
        }
      });
  },
};
