/** What the router hands a handler, and what a handler answers. */
import type { IncomingHttpHeaders } from 'node:http';
import type { EndpointId } from '../contract/index.js';
import type { FaultKind } from './fault-kinds.js';
import type { AccountState } from './state.js';

export interface ApiCall {
  readonly endpoint: EndpointId;
  readonly account: AccountState;
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (POST), undefined for GET. */
  readonly body: unknown;
  /** Outcome fault forced by a fault script for this create. */
  readonly outcomeFault?: FaultKind;
  /** Set by create handlers: whether this was an idempotent replay. */
  replay?: boolean;
}

export interface Answer {
  status: number;
  body: unknown;
}
