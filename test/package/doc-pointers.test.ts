/**
 * docs/glossary.md names each term's home file: those names must hold. A
 * file that moves, or a symbol that leaves the file its entry names, fails
 * here with the entry's line, so the glossary is fixed in the same change.
 * Every folder of src/ has its terms in the glossary (it names the folder).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../helpers/index.js';

const GLOSSARY = repoPath('docs', 'glossary.md');
const lines = readFileSync(GLOSSARY, 'utf8').split('\n');

/** Every file under src/, as `src/...` paths. */
function sourceFiles(dir = repoPath('src'), prefix = 'src'): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    const rel = `${prefix}/${name}`;
    return statSync(full).isDirectory() ? sourceFiles(full, rel) : [rel];
  });
}
const SOURCES = sourceFiles();

/** `src/a/b.ts`, `docs/x.md`, or a file name alone (`local-gate.ts`, `redis/`). */
const ROOTED = /\b((?:src|docs|bench|test|schema|scripts)\/[\w./-]*[\w/])/g;
const BACKTICKED_FILE = /`([\w./-]+\.(?:ts|md|json|sql))`/g;

interface Named {
  readonly line: number;
  readonly text: string;
}

function named(pattern: RegExp): Named[] {
  return lines.flatMap((text, i) =>
    [...text.matchAll(pattern)].map((match) => ({ line: i + 1, text: match[1] ?? '' })),
  );
}

function exists(name: string): boolean {
  if (/^(src|docs|bench|test|schema|scripts)\//.test(name))
    return existsSync(repoPath(...name.split('/')));
  // A name relative to a folder the entry named before it: some file under src/ ends with it.
  return SOURCES.some((file) => file.endsWith(`/${name}`));
}

describe('docs/glossary.md', () => {
  it('names only files and folders that exist', () => {
    const stale = [...named(ROOTED), ...named(BACKTICKED_FILE)]
      .filter((entry) => !exists(entry.text.replace(/\/$/, '')))
      .map((entry) => `line ${entry.line}: ${entry.text}`);
    expect([...new Set(stale)]).toEqual([]);
  });

  it('finds each named symbol defined in the file named beside it', () => {
    // "`budgetStanding`, `src/journal/ops/budget-standing.ts`" or "`CurrentRule` in `src/...`"
    const pair = /`([A-Za-z_][\w]*)`(?:,| in) `(src\/[\w./-]+\.ts)`/g;
    const wrong = lines.flatMap((text, i) =>
      [...text.matchAll(pair)]
        .filter(([, symbol, file]) => {
          const full = repoPath(...(file ?? '').split('/'));
          if (!existsSync(full)) return false; // reported by the test above
          const defines = new RegExp(
            `\\b(?:function\\*?|class|const|let|type|interface|enum)\\s+${symbol}\\b`,
          );
          return !defines.test(readFileSync(full, 'utf8'));
        })
        .map(([, symbol, file]) => `line ${i + 1}: ${symbol} is not defined in ${file}`),
    );
    expect(wrong).toEqual([]);
  });

  it('covers every folder of src/', () => {
    const text = lines.join('\n');
    const folders = readdirSync(repoPath('src')).filter((name) =>
      statSync(repoPath('src', name)).isDirectory(),
    );
    const missing = folders.filter((folder) => !text.includes(`src/${folder}/`));
    expect(missing).toEqual([]);
  });
});

describe('comments in src/', () => {
  it('name only files that exist (beside the file, under src/, or from the repository root)', () => {
    const everyFile = new Set([
      ...SOURCES,
      ...['docs', 'bench', 'test', 'schema', 'scripts'].flatMap((dir) =>
        sourceFiles(repoPath(dir), dir),
      ),
      ...readdirSync(repoPath()).filter((name) => statSync(repoPath(name)).isFile()),
    ]);
    const fileName = /(?<![\w./-])((?:[\w-]+\/)*[\w.-]+\.(?:ts|md|json|sql))\b/g;
    const comment = /^\s*(?:\/\/|\/\*\*|\*)/;
    const stale: string[] = [];
    for (const file of SOURCES.filter((name) => name.endsWith('.ts'))) {
      readFileSync(repoPath(...file.split('/')), 'utf8')
        .split('\n')
        .forEach((text, i) => {
          if (!comment.test(text)) return;
          for (const [, name = ''] of text.matchAll(fileName)) {
            const candidates = [
              path.posix.normalize(path.posix.join(path.posix.dirname(file), name)),
              path.posix.normalize(`src/${name}`),
              path.posix.normalize(name),
            ];
            const found =
              candidates.some((candidate) => everyFile.has(candidate)) ||
              [...everyFile].some((known) => known.endsWith(`/${name}`));
            // An example output name, not a pointer: `portraits/ava-1.png.json`.
            if (!found && !/\.(png|jpg|webp|mp4)\.json$/.test(name)) {
              stale.push(`${file}:${i + 1}: ${name}`);
            }
          }
        });
    }
    expect(stale).toEqual([]);
  });
});
