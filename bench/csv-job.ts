/** The job files of the job benchmarks: one ideogram step over a generated rows CSV. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatCsv } from '../src/job/index.js';

/**
 * Writes `rows.csv` (`rows` rows that differ in every text column) and
 * `job.yaml` beside it; `stepLines` are the step's `matrix:`/`input:` lines.
 * Returns the job file's path.
 */
export function writeCsvJob(
  dir: string,
  options: { readonly name: string; readonly rows: number; readonly stepLines: readonly string[] },
): string {
  const rows = [['sku', 'product', 'setting']];
  for (let i = 0; i < options.rows; i++)
    rows.push([`sku-${i}`, `Product "${i}", deluxe`, `setting ${i % 37}`]);
  writeFileSync(join(dir, 'rows.csv'), formatCsv(rows));
  const job = join(dir, 'job.yaml');
  writeFileSync(
    job,
    [
      'version: 1',
      `name: ${options.name}`,
      'generations:',
      '  - id: hero',
      '    model: ideogram-influencer',
      '    rows: rows.csv',
      ...options.stepLines,
      '',
    ].join('\n'),
  );
  return job;
}
