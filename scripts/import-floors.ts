/**
 * `npm run lint:imports` (after dependency-cruiser): how many floors src/
 * has. A floor is a node of the folder-level graph of value imports (each
 * folder of src/, and each file at its top); the count is the longest chain
 * of folders each importing the next. Fails above MAX_FLOORS, or when folders
 * import each other in a circle. `import type` is left out: it is erased at
 * compile time.
 * The file-level rules (cycles, layer order) are .dependency-cruiser.cjs's.
 */
import { execFileSync } from 'node:child_process';

/** The most floors src/ may have: a newcomer reads the house top to bottom. */
const MAX_FLOORS = 9;

interface Cruised {
  readonly modules: readonly {
    readonly source: string;
    readonly dependencies: readonly { readonly resolved: string; readonly dependencyTypes: readonly string[] }[];
  }[];
}

/** `src/job/schema.ts` → `job`; `src/index.ts` → `index.ts`. */
function folderOf(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'src' ? parts[1] : undefined;
}

function folderGraph(cruised: Cruised): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const module of cruised.modules) {
    const from = folderOf(module.source);
    if (from === undefined) continue;
    const arrows = graph.get(from) ?? new Set<string>();
    graph.set(from, arrows);
    for (const dependency of module.dependencies) {
      if (dependency.dependencyTypes.includes('type-only')) continue;
      const to = folderOf(dependency.resolved);
      if (to !== undefined && to !== from) arrows.add(to);
    }
  }
  return graph;
}

/** The longest chain from each folder down; a circle of folders is thrown as its path. */
function longestChains(graph: Map<string, Set<string>>): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const walking: string[] = [];
  const visit = (folder: string): string[] => {
    const known = chains.get(folder);
    if (known) return known;
    const at = walking.indexOf(folder);
    if (at !== -1) throw new Error(`folders import each other in a circle: ${[...walking.slice(at), folder].join(' → ')}`);
    walking.push(folder);
    let below: string[] = [];
    for (const next of graph.get(folder) ?? []) {
      const chain = visit(next);
      if (chain.length > below.length) below = chain;
    }
    walking.pop();
    const chain = [folder, ...below];
    chains.set(folder, chain);
    return chain;
  };
  for (const folder of [...graph.keys()].sort()) visit(folder);
  return chains;
}

const json = execFileSync('depcruise', ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
  encoding: 'utf8',
  maxBuffer: 256 * 1024 * 1024,
});
try {
  const chains = longestChains(folderGraph(JSON.parse(json) as Cruised));
  const longest = [...chains.values()].reduce((a, b) => (b.length > a.length ? b : a), []);
  console.log(`${longest.length} floors (at most ${MAX_FLOORS}): ${longest.join(' → ')}`);
  if (longest.length > MAX_FLOORS) {
    console.error(`src/ has more than ${MAX_FLOORS} floors: move what the top needs from the bottom lower`);
    process.exitCode = 1;
  }
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
}
