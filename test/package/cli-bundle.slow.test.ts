/**
 * The CLI runs from its bundle (scripts/bundle-cli.ts): a command loads a
 * few files of dist/bundle/ and none of tsc's ES modules (what `createRequire`
 * loads is not seen here), what it imports on demand stays out until asked
 * for (the emulator), and a module that finds a file from its own place
 * (`import.meta.url`) still finds it: package.json here; the PostgreSQL
 * journal's worker in the spawned PostgreSQL CLI tests (test/cli/postgres-*).
 * Needs `npm run build`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DIST, firstStdoutLine, REPO, spawnCli } from '../helpers/index.js';

const BUNDLE = path.join(DIST, 'bundle');
const HOOK = fileURLToPath(new URL('./fixtures/loaded-modules.mjs', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'ibatch-bundle-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `ibatch ...args` started with the hook that lists what it loads (`loadedFiles`). */
function spawnListed(args: readonly string[]) {
  const list = path.join(scratch, `loaded-${args.join('-')}.txt`);
  const run = spawnCli(args, {
    cwd: scratch,
    env: { NODE_OPTIONS: `--import ${pathToFileURL(HOOK).href}`, LOADED_MODULES_FILE: list },
  });
  return { run, loadedFiles: () => filesOfDist(list) };
}

/** The files of dist/ listed in `list`, once each. */
function filesOfDist(list: string): string[] {
  const urls = readFileSync(list, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:'));
  return [...new Set(urls.map((url) => fileURLToPath(url)))].filter(
    (file) => !path.relative(DIST, file).startsWith('..'),
  );
}

/** What `ibatch ...args` printed and the files of dist/ it loaded, once it has exited. */
async function distFilesLoaded(args: readonly string[]) {
  const { run, loadedFiles } = spawnListed(args);
  const { code, stdout } = await run.exited;
  return { code, stdout, files: loadedFiles() };
}

/** The bundle's files holding the emulator's server (a chunk of its own). */
const emulatorFiles = () =>
  readdirSync(BUNDLE)
    .map((name) => path.join(BUNDLE, name))
    .filter((file) => readFileSync(file, 'utf8').includes('function startEmulator('));

describe('the CLI bundle', () => {
  it('a command loads a few files of the bundle and no other ES module of dist/', async () => {
    const { files, stdout, code } = await distFilesLoaded(['schema']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toHaveProperty('$schema');
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => path.dirname(file) !== BUNDLE)).toEqual([]);
    expect(files.length).toBeLessThan(15);
  });

  it('the emulator is loaded only by what runs it', async () => {
    const server = emulatorFiles();
    expect(server).toHaveLength(1);
    const status = await distFilesLoaded(['status']);
    expect(status.code).toBe(2); // no journal here
    expect(status.files.filter((file) => server.includes(file))).toEqual([]);
    const emulator = spawnListed(['emulator', '--port', '0', '--json']);
    expect(JSON.parse(await firstStdoutLine(emulator.run))).toHaveProperty('baseUrl');
    expect(emulator.loadedFiles()).toEqual(expect.arrayContaining(server));
  });

  it("finds package.json from a module's own place: --version is the package's", async () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { stdout, code } = await distFilesLoaded(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(pkg.version);
  });
});
