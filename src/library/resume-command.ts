/**
 * The one command that resumes a run, as `ibatch status` prints it and as
 * run-end notifications send it ("run the same command again" spelled out):
 * the job and the flags that say which run, where, with which limits and
 * where its outputs go, quoted for a POSIX shell.
 *
 * Left out on purpose: `--notify` URLs (one receiver is never shown another's
 * URL), `--fresh` (a resume finishes the run; it does not start items over),
 * `--wait`, `--json` and `--log-format` (how this invocation waited and
 * printed, not which run), and `--time-scale` (it only scales `--emulator`,
 * an in-process service that ends with the process). The limits store goes
 * without its user name and password: the command is shown to receivers and
 * in Slack, and the password stays on the machine that ran it.
 */
import { storeUrlWithoutCredentials } from '../limits/index.js';

/** The flags of `run` a resume repeats. */
export interface ResumeFlags {
  readonly emulator?: boolean;
  readonly baseUrl?: string;
  readonly journal?: string;
  readonly out?: string;
  readonly runId?: string;
  readonly maxSpend?: number;
  readonly limits?: string;
  readonly limitsStore?: string;
  /** Repeated when not the default 1 (the store may come from IBATCH_REDIS_URL). */
  readonly share?: number;
  readonly offline?: boolean;
  readonly maxItems?: number;
  readonly allowOutsideJobFolder?: boolean;
  readonly deliver?: string;
}

export function resumeCommand(jobArg: string, flags: ResumeFlags): string {
  const args = ['ibatch', 'run', jobArg];
  const add = (flag: string, value?: string | number | boolean) => {
    if (value === undefined || value === false) return;
    args.push(flag);
    if (value !== true) args.push(String(value));
  };
  const store = flags.limitsStore?.trim() || undefined;
  add('--emulator', flags.emulator);
  add('--base-url', flags.baseUrl);
  add('--journal', flags.journal);
  add('--out', flags.out);
  add('--run-id', flags.runId);
  add('--max-spend', flags.maxSpend);
  add('--limits', flags.limits);
  add('--limits-store', store && storeUrlWithoutCredentials(store));
  add('--share', flags.share === 1 ? undefined : flags.share);
  add('--offline', flags.offline);
  add('--max-items', flags.maxItems);
  add('--allow-outside-job-folder', flags.allowOutsideJobFolder);
  add('--deliver', flags.deliver);
  return args.map(shellQuote).join(' ');
}

export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
