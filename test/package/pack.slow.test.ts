/**
 * `npm pack` -> install the tarball into an empty folder -> `npx ibatch --help`
 * and `npx ibatch run jobs/quickstart.yaml --emulator` work there, and the
 * library imports and type-checks from the installed package.
 *
 * SLOW: installing builds better-sqlite3 from source when no prebuilt binary
 * can be fetched (1-2 minutes on an idle 2-core machine, up to ~5 on a busy
 * one), hence the 10-minute hook timeout. Dependencies come from the npm
 * registry or the local cache (--prefer-offline).
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, REPO, runCommand, tempDir } from '../helpers/index.js';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const TSC = path.join(REPO, 'node_modules/.bin/tsc');

interface PackResult {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

describe('npm pack and install', () => {
  let dir: string;
  let app: string;
  let packed: PackResult;

  beforeAll(async () => {
    dir = tempDir('pack');
    app = path.join(dir, 'app');
    mkdirSync(app);
    // dist/ is already built (`pretest`). `--ignore-scripts` keeps `prepare`
    // from rebuilding it in place while other suites run the CLI from it.
    const pack = await runCommand(
      NPM,
      ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
      {
        cwd: REPO,
        timeoutMs: 180_000,
      },
    );
    expect(pack.code, pack.stderr).toBe(0);
    packed = (
      JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as PackResult[]
    )[0] as PackResult;
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'pack-probe', private: true, type: 'module' }),
    );
    const install = await runCommand(
      NPM,
      ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(dir, packed.filename)],
      { cwd: app, timeoutMs: 540_000 },
    );
    expect(install.code, install.stderr).toBe(0);
  }, 600_000);

  it('ships dist with declarations, the bin, schema and the quickstart job; no state or sources', () => {
    const files = packed.files.map((f) => f.path);
    for (const needed of [
      'bin/ibatch.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/main.js',
      'dist/bundle/cli.js',
      'schema/job.schema.json',
      'schema/provenance.schema.json',
      'openapi/service.yaml',
      'jobs/quickstart.yaml',
      'README.md',
      'package.json',
    ]) {
      expect(files).toContain(needed);
    }
    const unwanted = files.filter((f) =>
      /^(src|test|bench|examples)\/|\.map$|\.ibatch\/|^jobs\/out\/|journal\.db/.test(f),
    );
    expect(unwanted).toEqual([]);
  });

  it('`npx ibatch --help` works in the empty folder', async () => {
    const help = await runCommand(NPX, ['ibatch', '--help'], {
      cwd: app,
      env: cleanEnv(),
      timeoutMs: 60_000,
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Usage: ibatch/);
    expect(help.stdout).toMatch(/run \[options\]/);
  });

  it('`npx ibatch run jobs/quickstart.yaml --emulator` works with the packaged job', async () => {
    cpSync(path.join(app, 'node_modules/influencer-batch/jobs'), path.join(app, 'jobs'), {
      recursive: true,
    });
    const run = await runCommand(
      NPX,
      ['ibatch', 'run', 'jobs/quickstart.yaml', '--emulator', '--time-scale', '40'],
      { cwd: app, env: cleanEnv(), timeoutMs: 120_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/6 succeeded, 0 failed/);
    const manifest = readFileSync(path.join(app, 'jobs/out/quickstart/manifest.jsonl'), 'utf8');
    expect(manifest.trim().split('\n').length).toBeGreaterThanOrEqual(6);
  }, 150_000);

  it('the library imports and type-checks from the installed package', async () => {
    const imported = await runCommand(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('influencer-batch'); console.log(['loadJob','planJob','runJob','createClient','startEmulator','connect'].map((n) => typeof m[n]).join(','))",
      ],
      { cwd: app, timeoutMs: 30_000 },
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout.trim()).toBe(Array(6).fill('function').join(','));

    const good = [
      "import { connect, EXIT, type RunEvent, type RunResult, startEmulator } from 'influencer-batch';",
      'const emulator = await startEmulator({ timeScale: 20 });',
      "const service = connect({ baseUrl: emulator.baseUrl, apiKey: emulator.accounts[0]?.apiKey ?? '' });",
      "const { result }: { result: RunResult } = await service.run('jobs/quickstart.yaml', { onEvent: (e: RunEvent) => void e.type });",
      'export const ok: boolean = result.exitCode === EXIT.ok;',
    ].join('\n');
    writeFileSync(path.join(app, 'good.ts'), good);
    // Types are real, not `any`: a wrong use must be refused.
    writeFileSync(
      path.join(app, 'bad.ts'),
      "import type { RunResult } from 'influencer-batch';\nexport const n = (r: RunResult): string => r.exitCode;\n",
    );
    const tscArgs = (file: string) => [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2023',
      // Only the package's own declarations are under test here; @types/better-sqlite3
      // is one of its dependencies (docs/library.md).
      '--skipLibCheck',
      '--types',
      'node',
      '--typeRoots',
      path.join(REPO, 'node_modules/@types'),
      file,
    ];
    const ok = await runCommand(TSC, tscArgs('good.ts'), { cwd: app, timeoutMs: 120_000 });
    expect(ok.code, ok.stdout).toBe(0);
    const refused = await runCommand(TSC, tscArgs('bad.ts'), { cwd: app, timeoutMs: 120_000 });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toMatch(/TS2322/);
  }, 300_000);
});
