/**
 * The README's "Dependencies" table names every runtime dependency of
 * package.json, and only those: a dependency added without saying what it is
 * for fails here, and so does a row left behind when one is removed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../helpers/index.js';

const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as {
  readonly dependencies: Readonly<Record<string, string>>;
};

/** The packages named in the first column of the table under `## Dependencies`. */
function tabled(): string[] {
  const readme = readFileSync(repoPath('README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('Dependencies\n')) ?? '';
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] ?? '');
}

describe('README.md, Dependencies', () => {
  it('has a row for each runtime dependency of package.json, and no other', () => {
    expect(tabled().sort()).toEqual(Object.keys(pkg.dependencies).sort());
  });
});
