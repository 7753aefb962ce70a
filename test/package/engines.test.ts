/**
 * `npm install` on the oldest Node that package.json's `engines` promises
 * prints no `EBADENGINE`: every package of the lockfile npm checks (all but
 * the optional ones, which npm skips without a word when their engines do not
 * match) accepts that Node. A dependency raising its floor fails here, not on
 * a user's machine.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../helpers/index.js';

const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { readonly version: string } | null;
  satisfies(version: string, range: string): boolean;
};

interface Locked {
  readonly version?: string;
  readonly optional?: boolean;
  readonly engines?: { readonly node?: string };
}

const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as {
  readonly engines: { readonly node: string };
};
const lock = JSON.parse(readFileSync(repoPath('package-lock.json'), 'utf8')) as {
  readonly packages: Readonly<Record<string, Locked>>;
};

describe('engines', () => {
  it('every package npm installs accepts the oldest Node package.json promises', () => {
    const oldest = semver.minVersion(pkg.engines.node)?.version ?? '';
    expect(oldest).toMatch(/^20\./);
    const refusing = Object.entries(lock.packages)
      .filter(([, locked]) => !locked.optional && locked.engines?.node !== undefined)
      .filter(([, locked]) => !semver.satisfies(oldest, locked.engines?.node ?? ''))
      .map(([where, locked]) => `${where}@${locked.version}: node ${locked.engines?.node}`);
    expect(refusing).toEqual([]);
  });
});
