/**
 * `npm run bench`: runs every benchmark in one process, one after the other
 * (so they do not compete for the two cores), prints one table and writes it
 * to bench/results.md with the machine it ran on.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BENCHMARKS } from './registry.js';
import { scalePreset } from './scale-presets.js';
import type { Benchmark, BenchRow } from './types.js';

function formatValue(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(3);
}

function toTable(rows: readonly BenchRow[]): string {
  const header =
    '| group | metric | value | unit | target | pass | note |\n|---|---|---|---|---|---|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.group} | ${r.metric} | ${formatValue(r.value)} | ${r.unit} | ${r.target ?? ''} | ${
        r.pass === undefined ? '' : r.pass ? 'yes' : 'NO'
      } | ${r.note ?? ''} |`,
  );
  return [header, ...lines].join('\n');
}

async function main(): Promise<void> {
  const only = process.argv[2];
  const rows: BenchRow[] = [];
  // The machine is shared: the load beside the run says how far the absolute figures are its own.
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ');
  const loadBefore = load();
  for (const [name, bench] of Object.entries(BENCHMARKS) as [string, Benchmark][]) {
    if (only && name !== only) continue;
    process.stderr.write(`bench: ${name} ...\n`);
    rows.push(...(await bench()));
  }
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${cpus().length} x ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
  const loadLine = `Load average (1 / 5 / 15 min): ${loadBefore} at start, ${load()} at end`;
  process.stderr.write(`bench: ${machine}; ${loadLine}\n`);
  const table = toTable(rows);
  const scale = scalePreset(process.env);
  const scaleSizes = `IBATCH_BENCH_SCALE=${scale.name} (${scale.small} beside ${scale.large} items)`;
  const doc = `# Benchmark results\n\nMachine: ${machine}  \n${loadLine} (other processes on the cores distort CPU and wall figures)  \nDate: ${new Date().toISOString()}\n\nAbsolute figures are this machine's; ratios are measured side by side in the same run. The scale rows' sizes: ${scaleSizes}; other presets and how to run them: docs/benchmarks.md (scaleRun).\n\n${table}\n`;
  process.stdout.write(`${table}\n`);
  if (!only) writeFileSync(fileURLToPath(new URL('./results.md', import.meta.url)), doc);
  if (rows.some((r) => r.pass === false)) process.exitCode = 1;
}

await main();
