/** Parses the CLI's `--faults` SPEC: `fault=rate[,fault=rate...]`, e.g. `error-500=0.05,reset-before=0.01`. */
import { type FaultKind, isFaultKind } from './fault-kinds.js';
import type { FaultConfig } from './options.js';

export function parseFaultSpec(spec: string): FaultConfig {
  const rates: Partial<Record<FaultKind, number>> = {};
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name = '', value = ''] = part.split('=');
    if (!isFaultKind(name))
      throw new TypeError(`Expected a fault kind in --faults, got \`${name}\``);
    const rate = Number(value);
    if (!Number.isFinite(rate) || rate < 0 || rate > 1) {
      throw new TypeError(`Expected \`${name}\` rate between 0 and 1, got \`${value}\``);
    }
    rates[name] = rate;
  }
  return { rates };
}
