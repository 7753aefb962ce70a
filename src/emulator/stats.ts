/** Counters the admin surface reports; tests assert client behaviour with them. */
import type { EndpointId } from '../contract/index.js';
import type { FaultKind } from './fault-kinds.js';

export interface EarlyRequest {
  accountId: string;
  endpoint: string;
  at: string;
  /** When the announced Retry-After elapsed. */
  notBefore: string;
}

export interface UploadAuthorizationRecord {
  /** Never the header value: only that it was present. */
  path: string;
  assetId?: string;
  accountId?: string;
  at: string;
}

export interface InjectedFault {
  seq: number;
  fault: FaultKind;
  endpoint: EndpointId;
  accountId?: string;
  at: string;
}

export interface AccountCounters {
  creates: number;
  /** preview-credits calls that reached the handler (answered or refused). */
  previews: number;
  replays: number;
  conflicts: number;
  trainings: number;
  rateLimited: number;
  unauthorized: number;
}

export function emptyCounters(): AccountCounters {
  return {
    creates: 0,
    previews: 0,
    replays: 0,
    conflicts: 0,
    trainings: 0,
    rateLimited: 0,
    unauthorized: 0,
  };
}

export class Stats {
  earlyRequests: EarlyRequest[] = [];
  uploadAuthorization: UploadAuthorizationRecord[] = [];
  faults: InjectedFault[] = [];
  readonly counters = new Map<string, AccountCounters>();
  /** Per account: authenticated requests by endpoint id (or path when no route matched). */
  readonly byEndpoint = new Map<string, Record<string, number>>();
  /** Per account: when the last announced Retry-After elapses (ms). */
  readonly notBefore = new Map<string, number>();
  unauthorized = 0;

  count(accountId: string, key: keyof AccountCounters): void {
    let c = this.counters.get(accountId);
    if (!c) {
      c = emptyCounters();
      this.counters.set(accountId, c);
    }
    c[key]++;
  }

  /** Records a 429's announced Retry-After for early-request detection. */
  announce(accountId: string, until: number): void {
    this.notBefore.set(accountId, Math.max(this.notBefore.get(accountId) ?? 0, until));
  }

  /** Call for every authenticated request as it arrives. */
  observe(accountId: string, endpoint: string, now: number): void {
    let seen = this.byEndpoint.get(accountId);
    if (!seen) {
      seen = {};
      this.byEndpoint.set(accountId, seen);
    }
    seen[endpoint] = (seen[endpoint] ?? 0) + 1;
    const until = this.notBefore.get(accountId);
    if (until !== undefined && now < until) {
      this.earlyRequests.push({
        accountId,
        endpoint,
        at: new Date(now).toISOString(),
        notBefore: new Date(until).toISOString(),
      });
    }
  }

  reset(): void {
    this.earlyRequests = [];
    this.uploadAuthorization = [];
    this.faults = [];
    this.counters.clear();
    this.byEndpoint.clear();
    this.notBefore.clear();
    this.unauthorized = 0;
  }
}
