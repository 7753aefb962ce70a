/** Every benchmark, by name (`npm run bench -- NAME` runs one). Add yours with one line. */
import { clientOverhead } from './client-overhead.js';
import { csvReader } from './csv-reader.js';
import { emulatorThroughput } from './emulator-throughput.js';
import { jobExpand } from './job-expand.js';
import { journalThroughput } from './journal-throughput.js';
import { largeJob } from './large-job.js';
import { limiterAccuracy } from './limiter.js';
import { limiterChoice } from './limiter-choice.js';
import { reportPages } from './report-pages.js';
import { runCampaign } from './run-campaign.js';
import { scaleRun } from './scale-run.js';
import type { Benchmark } from './types.js';

export const BENCHMARKS: Record<string, Benchmark> = {
  clientOverhead,
  csvReader,
  emulatorThroughput,
  jobExpand,
  journalThroughput,
  largeJob,
  limiterAccuracy,
  limiterChoice,
  reportPages,
  runCampaign,
  scaleRun,
};
