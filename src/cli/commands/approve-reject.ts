/**
 * `ibatch approve JOB.yaml FILE...` and `ibatch reject JOB.yaml FILE...`:
 * review decisions from scripts (docs/review.md). FILE is the manifest's
 * `file` (relative to the output folder) or a glob over it; an unknown one
 * is exit 2 and nothing is recorded. Each decision is committed at once
 * without the job's lock (a reviewer decides while a run goes on); the
 * manifest is rewritten with the decisions unless the job's newest run is
 * still running (that run writes them when it ends).
 */
import { REVIEW_DECISION, type ReviewDecision } from '../../journal/index.js';
import { recordDecisions, resolveOutputs } from '../../review/index.js';
import { printable } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { manifestWithDecisions, openReviewTarget } from '../review-target.js';

interface DecisionCliOptions {
  readonly reviewer?: string;
  readonly note?: string;
  readonly journal?: string;
}

function decisionCommand(decision: ReviewDecision, does: string): CommandModule {
  const name = decision === REVIEW_DECISION.approved ? 'approve' : 'reject';
  return {
    register(program, io) {
      withExamples(program.command(name), [
        [`${name} campaign.yaml shots/mug-1.png`, `${name} one output`],
        [`${name} campaign.yaml 'shots/*.png' --note "off brand"`, `${name} a glob, with a note`],
      ])
        .description(does)
        .argument('<job>', 'job file (YAML)')
        .argument('<file...>', "the manifest's `file` (relative to the output folder), or a glob")
        .option('--reviewer <name>', 'who decides (default: the OS user)')
        .option('--note <text>', 'a note kept with the decision')
        .option(
          '--journal <path>',
          'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job)',
        )
        .action(async (job: string, files: string[], options: DecisionCliOptions) => {
          await decide(io, decision, job, files, options);
        });
    },
  };
}

async function decide(
  io: CliIo,
  decision: ReviewDecision,
  jobFile: string,
  files: readonly string[],
  options: DecisionCliOptions,
): Promise<void> {
  const { journal, jobName, outputDir, described } = await openReviewTarget(
    io,
    jobFile,
    options.journal,
    true,
  );
  try {
    const outputs = resolveOutputs(journal, { name: jobName }, outputDir, files, described);
    const recorded = recordDecisions(journal, jobName, outputs, decision, {
      ...(options.reviewer !== undefined ? { reviewer: options.reviewer } : {}),
      ...(options.note !== undefined ? { note: options.note } : {}),
    });
    outputs.forEach((output, i) => {
      const r = recorded[i];
      const note = r?.note ? ` (${r.note})` : '';
      io.stdout.write(
        `${decision} ${printable(`${output.row.file} by ${r?.reviewer ?? '?'}${note}`)}\n`,
      );
    });
    manifestWithDecisions(io, journal, jobName, outputDir, described);
  } finally {
    journal.close();
  }
}

export const approveCommand = decisionCommand(
  REVIEW_DECISION.approved,
  'approve outputs: recorded in the journal and the manifest (spends nothing)',
);
export const rejectCommand = decisionCommand(
  REVIEW_DECISION.rejected,
  'reject outputs: the next `run` makes their items again with a new key (and a new seed)',
);
