/**
 * `ibatch review JOB.yaml`: serves the review page of the job's current
 * outputs on loopback until Ctrl-C, and prints its address with the
 * session's token. `--json` prints the listing (each output with its review
 * state) as one JSON document instead and exits. Spends nothing: no service
 * call, no API key needed.
 *
 * Stopping the server (SIGINT/SIGTERM) exits 0: it is how a review session
 * ends, every decision is already committed, and nothing was interrupted
 * that a later command would resume (unlike `run`, which exits 130). Before
 * it exits, the session's decisions go into the manifest's review columns the
 * way `approve`/`reject` put theirs (once at the end, not per decision: a
 * rewrite reads every output of the folder, too slow to do per click).
 */
import { spawn } from 'node:child_process';
import { loadJob } from '../../job/index.js';
import { openJournal } from '../../journal/index.js';
import { describedItemsOfFile } from '../../library/index.js';
import { defaultReviewer, outputRows } from '../../review/index.js';
import { fetchOutputsHere } from '../../scheduler/index.js';
import { UsageError } from '../../shared/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { integerAtLeast } from '../options.js';
import { manifestWithDecisions, reviewOutputDir } from '../review-target.js';
import { resolveTarget } from '../status-target.js';
import { waitForSignal } from '../wait-for-signal.js';

interface ReviewOptions {
  readonly journal?: string;
  readonly json?: boolean;
  readonly port: number;
  readonly host: string;
  readonly unsafeHost?: boolean;
  readonly open?: boolean;
  readonly reviewer?: string;
}

export const reviewCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('review'), [
      ['review campaign.yaml', 'serve the review page; open the printed address'],
      ['review campaign.yaml --open --reviewer ana', 'open it in the browser, decisions by ana'],
      ['review campaign.yaml --json', 'print every current output with its review state'],
    ])
      .description('approve or reject the outputs of a job in a local web page (spends nothing)')
      .argument('<job>', 'job file (YAML)')
      .option(
        '--journal <path>',
        'journal file (default: $IBATCH_JOURNAL, or .ibatch/journal.db beside the job)',
      )
      .option('--json', 'print the outputs with their review state as one JSON document and exit')
      .option(
        '--port <n>',
        'port to listen on (0 picks a free port)',
        integerAtLeast('--port', 0),
        0,
      )
      .option(
        '--host <host>',
        'address to listen on (loopback only without --unsafe-host)',
        '127.0.0.1',
      )
      .option('--unsafe-host', 'allow --host to be an address other machines can reach')
      .option('--open', 'open the page in the default browser')
      .option('--reviewer <name>', 'name recorded with each decision (default: the OS user)')
      .action(async (job: string, options: ReviewOptions) => {
        const target = resolveTarget(io, job, options.journal);
        if (!target.jobName) throw new UsageError(`Expected a job file, got \`${job}\``);
        // The items the job file describes now: the page lists none of another's.
        const described = async () =>
          target.jobPath ? await describedItemsOfFile(target.jobPath) : undefined;
        const { buildListing, checkHost, newToken, startReviewServer } = await import(
          '../../review/server/index.js'
        );
        // The job's folder on this machine: where a run of another machine is read.
        const here = target.jobPath
          ? loadJob(target.jobPath, { readsOutputsOnly: true }).output
          : undefined;
        if (options.json) {
          const journal = await openJournal(target.journalPath, { readonly: true });
          try {
            const listing = buildListing(journal, target.jobName, await described(), here);
            io.stdout.write(`${JSON.stringify(listing, null, 2)}\n`);
          } finally {
            journal.close();
          }
          return;
        }
        const host = checkHost(options.host, options.unsafeHost === true);
        // Its own lock name: a review may go on while `run` holds the job's.
        const journal = await openJournal(target.journalPath, {
          job: `${target.jobName} (review)`,
        });
        try {
          const stopped = waitForSignal();
          const describedNow = await described();
          if (here !== undefined) {
            const outputDir = reviewOutputDir(journal, target.jobName, here);
            const rows = outputRows(journal, target.jobName, outputDir, describedNow);
            await fetchOutputsHere(journal, target.jobName, outputDir, rows);
          }
          const server = await startReviewServer({
            ...(here !== undefined ? { here } : {}),
            journal,
            jobName: target.jobName,
            ...(describedNow ? { described: describedNow } : {}),
            reviewer: options.reviewer ?? defaultReviewer(io.env),
            host,
            port: options.port,
            token: newToken(),
          });
          io.stdout.write(`${server.url}\n`);
          io.stderr.write(`ibatch: reviewing "${target.jobName}" (Ctrl-C to stop)\n`);
          if (options.open) openBrowser(server.url);
          await stopped;
          await server.close();
          if (server.recorded() > 0) {
            const outputDir = reviewOutputDir(journal, target.jobName, server.outputDir);
            manifestWithDecisions(io, journal, target.jobName, outputDir, describedNow);
          }
          io.exitCode = 0;
        } finally {
          journal.close();
        }
      });
  },
};

/** Best effort: a missing opener leaves the printed address to click. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // Nothing to do: the address is printed.
  }
}
