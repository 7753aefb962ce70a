/**
 * Credit totals from manifest rows. A generation's `creditsCost` repeats on
 * each of its output rows, so every charge is counted once, by generation id
 * (or, for a row without one, by step/item/attempt). A refunded charge counts
 * as charged and refunded; net = charged - refunded.
 */
import type { ManifestRow } from './manifest-row.js';
import type { ReportTraining } from './report-data.js';

export interface CostLine {
  readonly charged: number;
  readonly refunded: number;
  readonly net: number;
}

export interface StepCost extends CostLine {
  readonly step: string;
  /** Output files recorded. */
  readonly outputs: number;
  /** Items failed for good (rows without a file). */
  readonly failures: number;
}

export interface CostSummary {
  readonly steps: StepCost[];
  readonly total: CostLine & { readonly outputs: number; readonly failures: number };
}

/**
 * Training charges appear as steps named `training:<id>`. `spend`, the
 * journal's own sum for the run (what `status` shows), replaces the total's
 * credits when given: rows cannot show every charge (a retried, refunded
 * attempt leaves no row), and the report must agree with `status`.
 */
export function summarizeCosts(
  rows: Iterable<ManifestRow>,
  trainings: readonly Pick<ReportTraining, 'id' | 'creditsCost' | 'refunded'>[] = [],
  spend?: CostLine,
): CostSummary {
  const tally = new CostTally(trainings);
  for (const row of rows) tally.add(row);
  return tally.summary(spend);
}

/** `summarizeCosts` row by row, for rows that are not all in memory at once. */
export class CostTally {
  readonly #steps = new Map<
    string,
    { charged: number; refunded: number; outputs: number; failures: number }
  >();
  readonly #seen = new Set<string>();

  constructor(trainings: readonly Pick<ReportTraining, 'id' | 'creditsCost' | 'refunded'>[] = []) {
    for (const training of trainings) {
      const entry = this.#stepOf(`training:${training.id}`);
      entry.charged += training.creditsCost ?? 0;
      if (training.refunded) entry.refunded += training.creditsCost ?? 0;
    }
  }

  add(row: ManifestRow): void {
    const entry = this.#stepOf(row.step);
    if (row.file) entry.outputs += 1;
    else entry.failures += 1;
    const chargeKey = row.generationId ?? `${row.step}\u0000${row.item}\u0000${row.attempt ?? 1}`;
    if (this.#seen.has(chargeKey)) return;
    this.#seen.add(chargeKey);
    entry.charged += row.creditsCost ?? 0;
    if (row.refunded) entry.refunded += row.creditsCost ?? 0;
  }

  summary(spend?: CostLine): CostSummary {
    const lines = [...this.#steps].map(([step, e]) => ({
      step,
      ...e,
      charged: round(e.charged),
      refunded: round(e.refunded),
      net: round(e.charged - e.refunded),
    }));
    const sum = (pick: (s: StepCost) => number) =>
      round(lines.reduce((acc, s) => acc + pick(s), 0));
    return {
      steps: lines,
      total: {
        charged: spend ? round(spend.charged) : sum((s) => s.charged),
        refunded: spend ? round(spend.refunded) : sum((s) => s.refunded),
        net: spend ? round(spend.net) : sum((s) => s.net),
        outputs: sum((s) => s.outputs),
        failures: sum((s) => s.failures),
      },
    };
  }

  #stepOf(id: string) {
    const existing = this.#steps.get(id);
    if (existing) return existing;
    const entry = { charged: 0, refunded: 0, outputs: 0, failures: 0 };
    this.#steps.set(id, entry);
    return entry;
  }
}

/** Credits may be fractional (per-second pricing): keep two decimals, drop float noise. */
const round = (n: number): number => Math.round(n * 100) / 100;
