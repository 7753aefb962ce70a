/**
 * Typed client of the admin surface; works against an in-process emulator or
 * a child process (`new EmulatorAdmin(adminUrl)`). Uses global fetch.
 */
import type { EmulatorStats } from './admin.js';
import type { Behaviour, FaultConfig, FaultScript } from './options.js';
import type { LedgerEntry } from './state.js';

export class EmulatorAdmin {
  constructor(readonly adminUrl: string) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.adminUrl}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const json = (await response.json()) as T & { error?: { message: string } };
    if (!response.ok)
      throw new Error(`Emulator admin ${path}: ${json.error?.message ?? response.status}`);
    return json;
  }

  async ledger(accountId?: string): Promise<LedgerEntry[]> {
    const query = accountId ? `?accountId=${encodeURIComponent(accountId)}` : '';
    return (await this.call<{ entries: LedgerEntry[] }>('GET', `/ledger${query}`)).entries;
  }

  stats(): Promise<EmulatorStats> {
    return this.call('GET', '/stats');
  }

  async accounts(): Promise<Array<{ id: string; apiKey: string; credits: number }>> {
    return (
      await this.call<{ accounts: Array<{ id: string; apiKey: string; credits: number }> }>(
        'GET',
        '/accounts',
      )
    ).accounts;
  }

  setCredits(accountId: string, credits: number): Promise<{ id: string; credits: number }> {
    return this.call('POST', '/credits', { accountId, credits });
  }

  revokeKey(apiKey: string): Promise<{ revoked: boolean }> {
    return this.call('POST', '/revoke', { apiKey });
  }

  /** Issues a new live key for the account (key rotation after a revocation). */
  issueKey(accountId: string): Promise<{ apiKey: string }> {
    return this.call('POST', '/keys', { accountId });
  }

  /** Replaces the probabilistic fault configuration (`{}` turns them off). */
  setFaults(config: FaultConfig): Promise<{ ok: true }> {
    return this.call('POST', '/faults', config);
  }

  /** Appends scripted faults: "the next N matching requests get F". */
  scriptFaults(scripts: FaultScript[]): Promise<{ pending: FaultScript[] }> {
    return this.call('POST', '/faults/script', { scripts });
  }

  setBehaviour(behaviour: Partial<Behaviour>): Promise<Behaviour> {
    return this.call('POST', '/behaviour', behaviour);
  }

  /** These generations of the account vanish (their ids answer 404); the ledger keeps their charges. Returns those it had. */
  forgetGenerations(accountId: string, ids: readonly string[]): Promise<{ forgotten: string[] }> {
    return this.call('POST', '/forget-generations', { accountId, ids });
  }

  /** Clears rate counters, stats, faults and scripts; restores the start-up behaviour. Keeps accounts, resources and ledger. */
  reset(): Promise<{ ok: true }> {
    return this.call('POST', '/reset', {});
  }
}
