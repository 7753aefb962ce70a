/**
 * Matrix expansion with the semantics of GitHub Actions' `strategy.matrix`:
 * 1. the cartesian product of every listed key;
 * 2. `exclude` drops each combination that matches all keys of an entry;
 * 3. each `include` entry is merged into every combination whose original
 *    values it does not overwrite; if it fits none, it becomes a new
 *    combination of its own.
 */
import type { TemplateValue } from './types.js';

export type Combination = Record<string, TemplateValue>;

export interface MatrixSpec {
  readonly include?: readonly Combination[];
  readonly exclude?: readonly Combination[];
  readonly [key: string]: unknown;
}

export function expandMatrix(matrix: MatrixSpec | undefined): Combination[] {
  if (!matrix) return [{}];
  const axes = Object.entries(matrix).filter(
    (entry): entry is [string, TemplateValue[]] =>
      entry[0] !== 'include' && entry[0] !== 'exclude' && Array.isArray(entry[1]),
  );
  let combos: Combination[] = [{}];
  for (const [name, values] of axes) {
    const next: Combination[] = [];
    for (const combo of combos) for (const value of values) next.push({ ...combo, [name]: value });
    combos = next;
  }
  const axisNames = new Set(axes.map(([name]) => name));
  const excluded = matrix.exclude ?? [];
  if (axes.length === 0) combos = [];
  combos = combos.filter((combo) => !excluded.some((rule) => matches(combo, rule)));
  // Only the axis-made combinations take include values, and their axis
  // values are never overwritten; an include that fits none is a new one.
  const baseCount = combos.length;
  for (const extra of matrix.include ?? []) {
    let merged = false;
    for (let index = 0; index < baseCount; index++) {
      const combo = combos[index] as Combination;
      const conflicts = Object.entries(extra).some(
        ([name, value]) => axisNames.has(name) && combo[name] !== value,
      );
      if (conflicts) continue;
      Object.assign(combo, extra);
      merged = true;
    }
    if (!merged) combos.push({ ...extra });
  }
  return combos;
}

function matches(combo: Combination, rule: Combination): boolean {
  return Object.entries(rule).every(([name, value]) => combo[name] === value);
}
