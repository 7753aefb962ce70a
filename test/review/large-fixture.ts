/** The large-job fixture (bench/large-outputs.ts) in a temp dir removed after the test. */
import { buildLargeOutputs, type LargeFixture } from '../../bench/large-outputs.js';
import { tempDir } from '../helpers/index.js';

export { LARGE_JOB, type LargeFixture } from '../../bench/large-outputs.js';

export function largeFixture(count: number): Promise<LargeFixture> {
  return buildLargeOutputs(tempDir('review-large'), count);
}
