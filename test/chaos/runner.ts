/**
 * Runs `node bin/ibatch.js run JOB` as a real child process that can be
 * SIGKILLed: by a timer (a random moment, measured from spawn or from the
 * moment the run logs that it started/resumed) or by itself at a crash point
 * (`IBATCH_CRASH_AT`). Needs `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { BIN } from '../helpers/paths.js';

export interface RunnerTarget {
  readonly jobPath: string;
  readonly journalPath: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly limits: string;
  /**
   * Other spellings of the journal path (a symlinked folder, `x/../`): the
   * spawns take them in turn, and every spelling must be the same journal and
   * the same lock.
   */
  readonly journalSpellings?: readonly string[];
}

export interface KillPlan {
  /** SIGKILL this long after the run logged `run.started`/`run.resumed` (or after spawn with `fromSpawn`). */
  readonly afterMs?: number;
  readonly fromSpawn?: boolean;
  /** `IBATCH_CRASH_AT` for the child: it kills itself at a crash point. */
  readonly crashAt?: string;
  readonly crashSeed?: number;
  /** The journal path as this spawn spells it (default: the target's). */
  readonly journal?: string;
  /** `IBATCH_JOURNAL_FULL_AFTER` for the child: its journal's disk fills after N pages. */
  readonly journalFullAfter?: number;
  /** More `ibatch run` arguments (service-faults.ts: `--forget-lost`, a dead `--limits-store`). */
  readonly args?: readonly string[];
}

export interface RunnerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Killed by our timer (false when it killed itself at a crash point or exited). */
  readonly killedByTimer: boolean;
  readonly ms: number;
  /** Last few KB of stdout + stderr, for diagnostics. */
  readonly tail: string;
  /** The child ran past `maxMs` and was killed: a hang. */
  readonly hung: boolean;
}

const TAIL_BYTES = 6000;

/** Environment of the child: ours minus every IBATCH_* setting, plus the key. */
function childEnv(target: RunnerTarget, plan: KillPlan): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('IBATCH_')) env[k] = v;
  env.IBATCH_API_KEY = target.apiKey;
  if (plan.journalFullAfter !== undefined)
    env.IBATCH_JOURNAL_FULL_AFTER = String(plan.journalFullAfter);
  if (plan.crashAt) {
    env.IBATCH_CRASH_AT = plan.crashAt;
    env.IBATCH_CRASH_SEED = String(plan.crashSeed ?? 1);
  }
  return env;
}

export function runOnce(target: RunnerTarget, plan: KillPlan, maxMs: number): Promise<RunnerExit> {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'run',
      target.jobPath,
      '--base-url',
      target.baseUrl,
      '--journal',
      plan.journal ?? target.journalPath,
      '--limits',
      target.limits,
      '--log-format',
      'json',
      ...(plan.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(target, plan) },
  );
  let tail = '';
  let killedByTimer = false;
  let hung = false;
  let killTimer: NodeJS.Timeout | undefined;
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) {
      killedByTimer = true;
      child.kill('SIGKILL');
    }
  };
  const armKill = () => {
    if (plan.afterMs !== undefined && !killTimer) killTimer = setTimeout(kill, plan.afterMs);
  };
  if (plan.fromSpawn) armKill();
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-TAIL_BYTES);
    // Tested on the tail, not the chunk: the line may arrive split in two.
    if (!plan.fromSpawn && /"event":"run\.(started|resumed)"/.test(tail)) armKill();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const guard = setTimeout(() => {
    hung = true;
    kill();
  }, maxMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(guard);
      if (killTimer) clearTimeout(killTimer);
      resolve({
        code,
        signal,
        killedByTimer: killedByTimer && !hung,
        ms: Date.now() - started,
        tail,
        hung,
      });
    });
  });
}
