/**
 * Picks the fault (if any) for a request: scripted faults first ("the next N
 * matching requests get F"), then seeded probabilistic ones. Off by default.
 */
import type { EndpointId } from '../contract/index.js';
import { type FaultKind, OUTCOME_FAULTS, POST_FAULTS, PRE_FAULTS } from './fault-kinds.js';
import { FAULT_DEFAULTS, type FaultConfig, type FaultScript } from './options.js';
import type { Prng } from './prng.js';

const STATUS_ENDPOINTS: ReadonlySet<EndpointId> = new Set([
  'getVideo',
  'getImage',
  'getTraining',
  'createTraining',
  'listGenerations',
  'listInfluencers',
]);

/** Whether `fault` means anything on `endpoint`. */
export function faultApplies(fault: FaultKind, endpoint: EndpointId): boolean {
  if (PRE_FAULTS.has(fault)) return true;
  switch (fault) {
    case 'reset-after-commit':
    case 'malformed-json':
    case 'missing-field':
      return true;
    case 'unknown-status':
      return STATUS_ENDPOINTS.has(endpoint);
    case 'generation-fail':
    case 'copy-fail':
    case 'safety-block':
    case 'never-terminal':
      return endpoint === 'createGeneration';
    case 'training-fail':
      return endpoint === 'createTraining';
    default:
      return false;
  }
}

export interface FaultPlan {
  pre?: FaultKind;
  post?: FaultKind;
  /** Outcome faults forced by a script for this create. */
  outcome?: FaultKind;
}

export class FaultPicker {
  private scripts: Array<Required<Pick<FaultScript, 'fault'>> & FaultScript & { left: number }> =
    [];

  constructor(
    private config: FaultConfig,
    private readonly prng: Prng,
  ) {}

  get slowMs(): number {
    return this.config.slowMs ?? FAULT_DEFAULTS.slowMs;
  }

  get hugeBodyBytes(): number {
    return this.config.hugeBodyBytes ?? FAULT_DEFAULTS.hugeBodyBytes;
  }

  get retryAfter(): string {
    return this.config.retryAfter ?? FAULT_DEFAULTS.retryAfter;
  }

  setConfig(config: FaultConfig): void {
    this.config = config;
  }

  addScripts(scripts: readonly FaultScript[]): void {
    for (const s of scripts) this.scripts.push({ ...s, left: s.times ?? FAULT_DEFAULTS.times });
  }

  pendingScripts(): FaultScript[] {
    return this.scripts.map(({ left, ...s }) => ({ ...s, times: left }));
  }

  clear(): void {
    this.scripts = [];
    this.config = {};
  }

  private rate(endpoint: EndpointId, fault: FaultKind): number {
    const per = this.config.perEndpoint?.[endpoint];
    return (per ? per[fault] : this.config.rates?.[fault]) ?? 0;
  }

  /** Request-level plan (pre and post faults, scripted outcome). */
  plan(endpoint: EndpointId, accountId: string | undefined): FaultPlan {
    const plan: FaultPlan = {};
    for (const script of this.scripts) {
      if (script.left <= 0) continue;
      if (script.endpoint !== undefined && script.endpoint !== endpoint) continue;
      if (script.accountId !== undefined && script.accountId !== accountId) continue;
      if (!faultApplies(script.fault, endpoint)) continue;
      const slot = PRE_FAULTS.has(script.fault)
        ? 'pre'
        : POST_FAULTS.has(script.fault)
          ? 'post'
          : 'outcome';
      if (plan[slot] !== undefined) continue;
      plan[slot] = script.fault;
      script.left--;
    }
    this.scripts = this.scripts.filter((s) => s.left > 0);
    if (plan.pre === undefined) plan.pre = this.draw(endpoint, PRE_FAULTS);
    if (plan.post === undefined && plan.pre === undefined)
      plan.post = this.draw(endpoint, POST_FAULTS);
    return plan;
  }

  /** Probabilistic draw of an outcome fault for one output of a create. */
  drawOutcome(endpoint: EndpointId, candidates: readonly FaultKind[]): FaultKind | undefined {
    return this.draw(endpoint, new Set(candidates.filter((f) => OUTCOME_FAULTS.has(f))));
  }

  /** One uniform draw per fault family keeps the stream aligned across configs of the same family. */
  private draw(endpoint: EndpointId, family: ReadonlySet<FaultKind>): FaultKind | undefined {
    let total = 0;
    const weights: Array<[FaultKind, number]> = [];
    for (const fault of family) {
      if (!faultApplies(fault, endpoint)) continue;
      const r = this.rate(endpoint, fault);
      if (r > 0) {
        weights.push([fault, r]);
        total += r;
      }
    }
    if (weights.length === 0) return undefined;
    let roll = this.prng.next();
    if (roll >= Math.min(1, total)) return undefined;
    roll *= Math.max(1, total);
    for (const [fault, r] of weights) {
      if (roll < r) return fault;
      roll -= r;
    }
    return weights[weights.length - 1]?.[0];
  }
}
