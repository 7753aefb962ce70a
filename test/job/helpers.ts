/** Test helpers for job files: the emulator's models as a catalog (plain data, no server). */
import type { Model } from '../../src/contract/index.js';
import { EMULATOR_MODELS } from '../../src/emulator/index.js';
import { catalogOf, type ModelCatalog } from '../../src/job/index.js';

/** The emulator's models as GET /models serves them (plain data, no server). */
export function emulatorCatalog(): ModelCatalog {
  const models = EMULATOR_MODELS.map(({ pricing: _p, latencyMs: _l, ...rest }) => ({
    ...rest,
    fields: rest.fields.map(({ integer: _i, exclude: _e, ...field }) => field),
  })) as Model[];
  return catalogOf(models);
}

/** A job of one sdxl-lite step over `rows.csv` (one column, `product`), prompted by it. */
export const ROWS_JOB = [
  'version: 1',
  'name: lean',
  'generations:',
  '  - id: shots',
  '    model: sdxl-lite',
  '    rows: rows.csv',
  '    input: { prompt: "{{ product }}" }',
  '',
].join('\n');
