import { ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

interface Stage {
  base: string;
  name?: string;
  instructions: string[];
}

/** The Dockerfile's stages in order, each with its instructions (comments and blank lines dropped). */
function stagesOf(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  for (const line of dockerfile.split('\n').map((text) => text.trim())) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) {
      stages.push({ base: from[1], name: from[2], instructions: [] });
    } else if (line && !line.startsWith('#')) {
      stages.at(-1)?.instructions.push(line);
    }
  }
  return stages;
}

/**
 * What the image is built from: the sources of every `COPY` (from the build context) of the stage the
 * image copies its files from, and of the stages that one is built on.
 */
function buildContextOf(dockerfile: string): string[] {
  const stages = stagesOf(dockerfile);
  const image = stages.at(-1);
  const buildStage = image?.instructions.map((line) => /^COPY\s+--from=(\S+)/.exec(line)?.[1]).find(Boolean);
  const chainOf = (name: string | undefined): Stage[] => {
    const stage = stages.find((candidate) => candidate.name !== undefined && candidate.name === name);
    return stage ? [...chainOf(stage.base), stage] : [];
  };
  const chain = chainOf(buildStage);
  if (chain.length === 0) {
    throw new Error('the Dockerfile has no build stage its last stage copies from');
  }
  return chain
    .flatMap((stage) => stage.instructions)
    .filter((line) => /^COPY\s/.test(line) && !/^COPY\s+--from=/.test(line))
    .flatMap((line) => line.split(/\s+/).slice(1, -1));
}

/**
 * The packages `npm prune --omit=dev` keeps, as paths relative to node_modules/. Only the top-level
 * ones: a package's nested node_modules/ goes with it.
 */
async function productionPackages(): Promise<string[]> {
  const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT });
  const prefix = join(ROOT, 'node_modules') + sep;
  return stdout
    .split('\n')
    .filter((path) => path.startsWith(prefix))
    .map((path) => path.slice(prefix.length))
    .filter((path) => !path.includes(`${sep}node_modules${sep}`));
}

/**
 * The image of docker/Dockerfile, assembled in `dir` without Docker (and without the network): its build
 * stage's files from this checkout, built by `npm run build` on the full dependency tree, then the last
 * stage's package.json, dist/ and node_modules/ holding only the production dependency tree.
 *
 * The packages are symlinked, not copied (seconds, not tens of seconds): run node there with
 * --preserve-symlinks, so that a package finds its dependencies under `dir` as in the image, not next
 * to where the link points, where the dev dependencies are too. Returns the image's directory.
 */
export async function assembleImage(dir: string): Promise<string> {
  const build = join(dir, 'build');
  const image = join(dir, 'image');
  for (const source of buildContextOf(readFileSync(join(ROOT, 'docker', 'Dockerfile'), 'utf8'))) {
    cpSync(join(ROOT, source), join(build, source), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(build, 'node_modules'));
  await run('npm', ['run', 'build'], { cwd: build });

  mkdirSync(join(image, 'node_modules'), { recursive: true });
  cpSync(join(build, 'package.json'), join(image, 'package.json'));
  renameSync(join(build, 'dist'), join(image, 'dist'));
  for (const name of await productionPackages()) {
    mkdirSync(dirname(join(image, 'node_modules', name)), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(image, 'node_modules', name));
  }
  return image;
}

/** Every package some file of dist/ requires that the image's node_modules/ does not hold. */
export function missingPackages(image: string): string[] {
  const dist = join(image, 'dist');
  const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
  const missing = new Set<string>();
  for (const file of files) {
    for (const [, specifier] of readFileSync(join(dist, file), 'utf8').matchAll(/require\(["']([^"'.][^"']*)["']\)/g)) {
      const name = specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/');
      if (!isBuiltin(specifier) && !existsSync(join(image, 'node_modules', name))) {
        missing.add(`${name} (${relative(image, join(dist, file))})`);
      }
    }
  }
  return [...missing].sort();
}

export interface ImageProcess {
  child: ChildProcess;
  /** Its stdout and stderr so far, for failure messages. */
  output(): string;
  /** Resolves with the exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** `node <args>` in the image's directory with only `env`, resolved once its output shows `readyLine`. */
export async function startInImage(
  image: string,
  args: string[],
  env: Record<string, string>,
  readyLine: string,
): Promise<ImageProcess> {
  const child = spawn(process.execPath, ['--preserve-symlinks', ...args], {
    cwd: image,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(readyLine)) {
        resolve();
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    void exited.then((end) =>
      reject(new Error(`node ${args.join(' ')} ended (${end}) before "${readyLine}":\n${output}`)),
    );
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    await ready;
  } finally {
    clearTimeout(timeout);
  }
  return { child, output: () => output, exited };
}

/** SIGKILLs the process if it still runs, and waits for it to be gone. */
export async function killImageProcess(started: ImageProcess | null): Promise<void> {
  if (started && started.child.exitCode === null && started.child.signalCode === null) {
    started.child.kill('SIGKILL');
    await started.exited;
  }
}
