/**
 * A temporary stand-in for a scheduled host: /srv/ibatch with the job and the
 * installed CLI, an env file, a lock folder and a log folder. Example command
 * lines get their paths substituted into it and `--emulator` added.
 */
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, REPO, tempDir } from '../helpers/index.js';

export interface HostSetup {
  readonly root: string;
  readonly srv: string;
  readonly envFile: string;
  readonly lockDir: string;
  readonly logDir: string;
  /** Folder of the node binary running the tests (cron's PATH may not hold it). */
  readonly nodeDir: string;
  /** Replaces the example's host paths with the temporary ones. */
  substitute(text: string): string;
}

/** The job file name the examples use. */
export const EXAMPLE_JOB = 'jobs/campaign.yaml';
/** Our run against the in-process emulator, time-scaled so it takes seconds. */
export const EMULATOR_FLAGS = '--emulator --time-scale 40';

/** A host layout in a temp folder, removed after the test. */
export function createHost(): HostSetup {
  const root = tempDir('host');
  const srv = path.join(root, 'srv');
  mkdirSync(path.join(srv, 'jobs'), { recursive: true });
  mkdirSync(path.join(srv, 'node_modules', '.bin'), { recursive: true });
  copyFileSync(path.join(REPO, 'jobs', 'quickstart.yaml'), path.join(srv, EXAMPLE_JOB));
  // As `npm install influencer-batch` would link it.
  symlinkSync(BIN, path.join(srv, 'node_modules', '.bin', 'ibatch'));
  const envFile = path.join(root, 'ibatch.env');
  // A key that must never be needed (the emulator supplies its own) nor leak.
  writeFileSync(
    envFile,
    'IBATCH_API_KEY=sk-example-never-used-0123456789\nIBATCH_LOG_FORMAT=json\n',
    {
      mode: 0o600,
    },
  );
  const lockDir = path.join(root, 'lock');
  const logDir = path.join(root, 'log');
  mkdirSync(lockDir);
  mkdirSync(logDir);
  return {
    root,
    srv,
    envFile,
    lockDir,
    logDir,
    nodeDir: path.dirname(process.execPath),
    substitute: (text) =>
      text
        .replaceAll('/srv/ibatch', srv)
        .replaceAll('/etc/ibatch/ibatch.env', envFile)
        .replaceAll('/var/lock/', `${lockDir}/`)
        .replaceAll('/var/log/ibatch/', `${logDir}/`)
        .replaceAll(EXAMPLE_JOB, `${EXAMPLE_JOB} ${EMULATOR_FLAGS}`),
  };
}
