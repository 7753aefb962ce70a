/**
 * The import rules of src/ (run by `npm run lint`; the floor count is scripts/import-floors.ts).
 * `import type` is left out of the cycle and layer rules: it is erased at
 * compile time, so it never decides what loads first.
 */

/**
 * src/'s folders (and top-level files) from the bottom up. A folder imports
 * values only from folders listed before it.
 */
const LAYERS = [
  'shared',
  'version.ts',
  'contract',
  'media',
  'emulator',
  'uploads',
  'journal',
  'outputs',
  'api',
  'limits',
  'provenance',
  'job',
  'deliver',
  'notify',
  'plan',
  'review',
  'scheduler',
  'library',
  'cli',
  'index.ts',
];

const node = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '[.]')}$` : `^src/${name}/`);

const layerRules = LAYERS.slice(0, -1).map((name, at) => ({
  name: `layer-${name}`,
  comment: `src/${name} sits below ${LAYERS.slice(at + 1).join(', ')}: it must not import from them`,
  severity: 'error',
  from: { path: node(name) },
  to: { path: LAYERS.slice(at + 1).map(node), dependencyTypesNot: ['type-only'] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-value-cycle',
      comment: 'A cycle of value imports: the load order then depends on which file is imported first',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'command-imports-command',
      comment: 'What two commands share belongs in the library or a CLI helper module (src/cli/*.ts)',
      severity: 'error',
      from: { path: '^src/cli/commands/([^/]+)[.]ts$', pathNot: '^src/cli/commands/index[.]ts$' },
      to: { path: '^src/cli/commands/', pathNot: '^src/cli/commands/$1[.]ts$' },
    },
    {
      name: 'decide-below-engine',
      comment:
        'scheduler/decide/ (what the next run makes) sits below the engine: it imports no engine file',
      severity: 'error',
      from: { path: '^src/scheduler/decide/' },
      to: {
        path: '^src/scheduler/',
        pathNot: '^src/scheduler/decide/',
        dependencyTypesNot: ['type-only'],
      },
    },
    ...layerRules,
  ],
  options: {
    includeOnly: '^src/',
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
