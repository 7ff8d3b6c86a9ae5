import { transformFile, Options } from '@swc/core';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Where the run's global setup put the compiled entrypoints (set for the test files it runs). */
export const ENTRYPOINTS_VARIABLE = 'GATEWAY_TEST_ENTRYPOINTS';

/**
 * src/ (without its specs) and migrations/ compiled by SWC into a directory of this run's own, laid
 * out as `npm run build` lays out dist/ (src/main.ts is main.js, the migrations are in migrations/), so
 * that a test spawns `node <dir>/main.js` as production runs `node dist/main.js`. Transpiling takes a
 * few seconds, where ts-node took 10-25 s to load an entrypoint on a loaded 2-core machine, on each
 * spawn; and it needs no type-check: `npm run check` did that. Returns the directory.
 */
export async function buildEntrypoints(): Promise<string> {
  const out = join(tmpdir(), `gateway-test-entrypoints-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  const options = entrypointSwcOptions();
  const sources = [
    ...tsFilesOf('src').map((file) => ({ file, target: join(out, relative(join(ROOT, 'src'), file)) })),
    ...tsFilesOf('migrations').map((file) => ({
      file,
      target: join(out, 'migrations', relative(join(ROOT, 'migrations'), file)),
    })),
  ];
  await Promise.all(
    sources.map(async ({ file, target }) => {
      const { code } = await transformFile(file, options);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target.replace(/\.ts$/, '.js'), code);
    }),
  );
  return out;
}

export function removeEntrypoints(dir: string | undefined): void {
  if (dir?.includes('gateway-test-entrypoints-')) {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The test transform's options (.swcrc), with the `src/…` imports rewritten to relative paths as tsc-paths does for dist/. */
function entrypointSwcOptions(): Options {
  const options = JSON.parse(readFileSync(join(ROOT, '.swcrc'), 'utf8')) as Options;
  return {
    ...options,
    swcrc: false,
    sourceMaps: false,
    jsc: { ...options.jsc, baseUrl: ROOT, paths: { 'src/*': ['src/*'] } },
  };
}

function tsFilesOf(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(ROOT, dir, file));
}
