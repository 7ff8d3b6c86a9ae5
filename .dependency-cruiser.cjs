// @ts-check
/**
 * The import rules of docs/architecture.md ("Layers"), run by `npm run lint`. The layer order is not repeated
 * here: tools/lint/architecture-layers.cjs reads it from the document's table, and fails when a folder of src/
 * has no place in it. There are no known violations to ignore: a rule holds for every file of src/.
 *
 * The product is checked, not its tests: unit tests beside the code (`*.spec.ts`) are not followed, since they
 * import what a case needs (test/support, tools' seeded prose) and never ship.
 */
const { layerRules } = require('./tools/lint/architecture-layers.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules(__dirname),
    {
      name: 'no-folder-loop',
      comment: 'Two folders of src/ import each other, directly or around a loop.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-file-loop',
      comment:
        'Two files of src/ load each other, directly or around a loop. An `import type` back is erased when ' +
        "compiled and loads nothing (TypeORM's two-sided relations: the other side is named, not imported).",
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-tools-in-src',
      comment: 'tools/ (demo, mock upstream, bench) may import src/, never the reverse: dist/ ships without it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^tools/' },
    },
    {
      name: 'no-tests-in-src',
      comment: 'The product imports neither test/ nor a spec of any tier.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/|\\.(spec|integration-spec|e2e-spec|cluster-spec)\\.ts$' },
    },
    {
      name: 'entity-registry-imports-entities',
      comment: 'database/ lists the entities and the TypeORM options: it imports the entities and config/, no service.',
      severity: 'error',
      from: { path: '^src/database/' },
      to: { path: '^src/', pathNot: '^src/(database|config)/|^src/modules/.+\\.entity\\.ts$' },
    },
    {
      name: 'no-unresolvable-import',
      comment: 'An import that cannot be resolved would escape every rule above.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // `src/...` imports resolve through tsconfig's paths.
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are arrows too: they tie a module to another's code as much as a value import does.
    tsPreCompilationDeps: true,
    // Seen where something imports them (so the rules above can refuse it), never cruised themselves.
    doNotFollow: { path: ['node_modules', '^test/', '^tools/', '\\.spec\\.ts$'] },
    // Files whose content did not change are not parsed again; a change of the rules empties it.
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
