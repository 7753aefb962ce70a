/**
 * `npm run chaos [-- --kills N --items N --seed S --time-scale N --regrow N --regrow-kills N --journal sqlite|postgres --keep --quiet]`
 * (env: CHAOS_KILLS, CHAOS_ITEMS, CHAOS_SEED, CHAOS_TIME_SCALE, CHAOS_REGROW, CHAOS_JOURNAL): a mixed
 * campaign with faults on, SIGKILLed at seeded random moments and resumed
 * until done, then grown by `--regrow` generations and re-run (killed again),
 * then checked against the emulator's ledger. `--journal postgres` keeps the
 * journal in a PostgreSQL server the driver starts for the run (the test
 * helper's `initdb`, PostgreSQL's binaries needed) instead of a SQLite file
 * beside the job. Prints one line per
 * kill and ONE summary line; exits 0 when every check holds, 1 otherwise.
 * Needs `npm run build` (the runner is `node bin/ibatch.js`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { launchPostgres, type RunningPostgres } from '../helpers/postgres-launch.js';
import { runChaos, summaryLine } from './chaos.js';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: process.env.CHAOS_KILLS ?? '50' },
    items: { type: 'string', default: process.env.CHAOS_ITEMS ?? '220' },
    seed: { type: 'string', default: process.env.CHAOS_SEED ?? '7' },
    'time-scale': { type: 'string', default: process.env.CHAOS_TIME_SCALE ?? '30' },
    'max-seconds': { type: 'string', default: '540' },
    /** Then grow the job by this many generations and re-run it (killed `--regrow-kills` times). */
    regrow: { type: 'string', default: process.env.CHAOS_REGROW ?? '30' },
    'regrow-kills': { type: 'string', default: '10' },
    journal: { type: 'string', default: process.env.CHAOS_JOURNAL ?? 'sqlite' },
    keep: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
});

function positive(name: string, raw: string | undefined): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`Expected --${name} to be a non-negative integer, got ${raw}\n`);
    process.exit(2);
  }
  return n;
}

if (values.journal !== 'sqlite' && values.journal !== 'postgres') {
  process.stderr.write(`Expected --journal to be sqlite or postgres, got ${values.journal}\n`);
  process.exit(2);
}
let postgres: { server: RunningPostgres; dir: string } | undefined;
if (values.journal === 'postgres') {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-chaos-pg-'));
  postgres = { server: await launchPostgres(dir), dir };
}

async function chaos() {
  try {
    return await runChaos({
      kills: positive('kills', values.kills),
      items: positive('items', values.items),
      seed: positive('seed', values.seed),
      timeScale: positive('time-scale', values['time-scale']),
      maxSeconds: positive('max-seconds', values['max-seconds']),
      faults: true,
      training: true,
      crashEvery: 5,
      production: true,
      ...(positive('regrow', values.regrow) > 0
        ? {
            regrow: {
              generations: positive('regrow', values.regrow),
              kills: positive('regrow-kills', values['regrow-kills']),
            },
          }
        : {}),
      ...(postgres ? { journal: await postgres.server.newSchema() } : {}),
      keep: values.keep ?? false,
      log: values.quiet ? undefined : (line) => process.stdout.write(`${line}\n`),
    });
  } finally {
    if (postgres) {
      await postgres.server.stop();
      rmSync(postgres.dir, { recursive: true, force: true });
    }
  }
}
const summary = await chaos();
for (const violation of summary.violations.slice(0, 40))
  process.stderr.write(`violation: ${violation}\n`);
if (summary.violations.length > 40)
  process.stderr.write(`... ${summary.violations.length - 40} more\n`);
if (values.keep) process.stderr.write(`kept ${summary.dir}\n`);
process.stdout.write(`${summaryLine(summary)}\n`);
process.exitCode =
  summary.violations.length === 0 && summary.double === 0 && summary.lost === 0 ? 0 : 1;
