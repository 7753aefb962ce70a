/** Where things are in the repository, for tests that read files or spawn the CLI. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the folder holding package.json). */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The CLI entry point; it loads `dist/`, so spawned runs need `npm run build`. */
export const BIN = path.join(REPO, 'bin', 'ibatch.js');
/** The compiled package (`npm run build`). */
export const DIST = path.join(REPO, 'dist');

/** A path inside the repository: `repoPath('jobs', 'quickstart.yaml')`. */
export function repoPath(...parts: string[]): string {
  return path.join(REPO, ...parts);
}
