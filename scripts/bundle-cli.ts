/**
 * `npm run build`'s second half: the CLI in a few files, dist/bundle/, which
 * bin/ibatch.js loads (dist/bundle/cli.js). tsc's dist/ stays what the
 * library and its types are; the bundle is the same compiled modules joined,
 * so a command starts by reading a few files where Node 20's ES module loader
 * resolved, read and linked some 300 of them one by one (figures:
 * docs/benchmarks.md, "The CLI in a few files"). What a command imports on
 * demand (each command, the emulator) stays a file of its own, loaded on
 * demand as before. Packages stay outside: node_modules resolves them.
 *
 * A module that reads `import.meta.url` (a file beside it, a require from its
 * place) gets the URL of its own file in dist/, not the bundle's: each such
 * use is rewritten to that file's URL, found from the bundle's at run time.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const outdir = path.join(dist, 'bundle');

/**
 * Each dist module's `import.meta.url` as its own file's URL, relative to the
 * bundle's. A text replacement: the sources use `import.meta` only as
 * `import.meta.url` in code, and any other use of it (`dirname`, `resolve`,
 * the object itself) fails the build rather than be left pointing at the bundle.
 */
const ownModuleUrl: Plugin = {
  name: 'own-module-url',
  setup(on) {
    on.onLoad({ filter: /\.js$/ }, async ({ path: file }) => {
      const text = await readFile(file, 'utf8');
      const other = /import\.meta(?!\.url\b)/.exec(text);
      if (other) throw new Error(`${file}: only import.meta.url can be bundled, not "${other[0]}…"`);
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
      const relative = path.relative(outdir, file).split(path.sep).join('/');
      const own = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', own), loader: 'js' };
    });
  },
};

await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: { cli: path.join(dist, 'cli', 'main.js') },
  outdir,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // node_modules stays where it is; the PostgreSQL journal's worker, which no
  // module imports (a thread's entry, found by URL), stays tsc's file.
  packages: 'external',
  plugins: [ownModuleUrl],
  // Names as written: an error's `name` is its class's (shared/errors.ts).
  keepNames: true,
  logLevel: 'warning',
  legalComments: 'none',
});
