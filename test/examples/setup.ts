/**
 * A temporary stand-in for a scheduled host: /srv/ibatch with the job and the
 * installed CLI, an env file, a lock folder and a log folder. Example command
 * lines get their paths substituted into it.
 *
 * Two kinds of service: `--emulator` added to the command line (a new
 * in-process emulator at every start), or an emulator of the test's own whose
 * URL and key go into the env file as a user's would, so that night after
 * night runs against one account and its ledger can judge what each night spent.
 */
import { appendFileSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { BIN, REPO, scaledLimits, tempDir } from '../helpers/index.js';

export interface HostSetup {
  readonly root: string;
  readonly srv: string;
  readonly envFile: string;
  readonly lockDir: string;
  readonly logDir: string;
  /** Folder of the node binary running the tests (cron's PATH may not hold it). */
  readonly nodeDir: string;
  /** The API key in the env file (must never appear in a log). */
  readonly apiKey: string;
  /** Replaces the example's host paths with the temporary ones. */
  substitute(text: string): string;
  /** Appends a row to the job's CSV (product-campaign hosts). */
  addRow(row: string): void;
}

export interface HostOptions {
  /** The service: the test's emulator (in the env file), else `--emulator` per start. */
  readonly emulator?: { readonly em: RunningEmulator; readonly timeScale: number };
  /**
   * The job at jobs/campaign.yaml: jobs/quickstart.yaml (default), or the
   * growing-CSV examples/product-campaign with its products.csv.
   */
  readonly job?: 'quickstart' | 'product-campaign';
}

/** The job file name the examples use. */
export const EXAMPLE_JOB = 'jobs/campaign.yaml';
/** Our run against the in-process emulator, time-scaled so it takes seconds. */
export const EMULATOR_FLAGS = '--emulator --time-scale 40';

/** A host layout in a temp folder, removed after the test. */
export function createHost(options: HostOptions = {}): HostSetup {
  const root = tempDir('host');
  const srv = path.join(root, 'srv');
  mkdirSync(path.join(srv, 'jobs'), { recursive: true });
  mkdirSync(path.join(srv, 'node_modules', '.bin'), { recursive: true });
  const csv = path.join(srv, 'jobs', 'products.csv');
  if (options.job === 'product-campaign') {
    const example = path.join(REPO, 'examples', 'product-campaign');
    copyFileSync(path.join(example, 'campaign.yaml'), path.join(srv, EXAMPLE_JOB));
    copyFileSync(path.join(example, 'products.csv'), csv);
  } else {
    copyFileSync(path.join(REPO, 'jobs', 'quickstart.yaml'), path.join(srv, EXAMPLE_JOB));
  }
  // As `npm install influencer-batch` would link it.
  symlinkSync(BIN, path.join(srv, 'node_modules', '.bin', 'ibatch'));
  const envFile = path.join(root, 'ibatch.env');
  const service = options.emulator;
  const account = service?.em.accounts[0];
  // Without an emulator of ours: a key that must never be needed (--emulator
  // supplies its own) nor leak.
  const apiKey = account?.apiKey ?? 'sk-example-never-used-0123456789';
  const lines = [`IBATCH_API_KEY=${apiKey}`, 'IBATCH_LOG_FORMAT=json'];
  if (service) {
    lines.push(
      `IBATCH_BASE_URL=${service.em.baseUrl}`,
      `IBATCH_LIMITS=${scaledLimits(service.timeScale)}`,
    );
  }
  writeFileSync(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  const lockDir = path.join(root, 'lock');
  const logDir = path.join(root, 'log');
  mkdirSync(lockDir);
  mkdirSync(logDir);
  const substituted = (text: string) =>
    text
      .replaceAll('/srv/ibatch', srv)
      .replaceAll('/etc/ibatch/ibatch.env', envFile)
      .replaceAll('/var/lock/', `${lockDir}/`)
      .replaceAll('/var/log/ibatch/', `${logDir}/`);
  return {
    root,
    srv,
    envFile,
    lockDir,
    logDir,
    apiKey,
    nodeDir: path.dirname(process.execPath),
    substitute: (text) =>
      service
        ? substituted(text)
        : substituted(text).replaceAll(EXAMPLE_JOB, `${EXAMPLE_JOB} ${EMULATOR_FLAGS}`),
    addRow: (row) => appendFileSync(csv, `${row}\n`),
  };
}
