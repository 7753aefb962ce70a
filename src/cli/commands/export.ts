/**
 * `ibatch export JOB.yaml DIR [--approved]`: the job's current outputs (or
 * only the approved ones) copied into DIR with their manifest rows
 * (manifest.jsonl + manifest.csv), readable names, nothing in DIR
 * overwritten (docs/review.md). Reads the journal only.
 */
import path from 'node:path';
import { exportOutputs, outputRows } from '../../review/index.js';
import { fetchOutputsHere } from '../../scheduler/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { openReviewTarget } from '../review-target.js';

interface ExportCliOptions {
  readonly approved?: boolean;
  readonly journal?: string;
}

export const exportCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('export'), [
      ['export campaign.yaml hand-off/', 'copy the current outputs and their manifest'],
      ['export campaign.yaml hand-off/ --approved', 'only the approved ones'],
    ])
      .description('copy the current (or approved) outputs with their manifest into a folder')
      .argument('<job>', 'job file (YAML)')
      .argument('<dir>', 'folder to copy into (existing files are never overwritten)')
      .option('--approved', 'only outputs approved in review')
      .option(
        '--journal <path>',
        'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job)',
      )
      .action(async (job: string, dir: string, options: ExportCliOptions) => {
        const target = await openReviewTarget(io, job, options.journal, false);
        try {
          const rows = outputRows(
            target.journal,
            target.jobName,
            target.outputDir,
            target.described,
          );
          await fetchOutputsHere(target.journal, target.jobName, target.outputDir, rows);
          const into = path.resolve(io.cwd, dir);
          const exported = exportOutputs(rows, target.outputDir, into, {
            approved: options.approved === true,
          });
          for (const row of exported) io.stdout.write(`${path.join(into, row.file ?? '')}\n`);
          io.stderr.write(`ibatch: ${exported.length} output(s) exported to ${into}\n`);
        } finally {
          target.journal.close();
        }
      });
  },
};
