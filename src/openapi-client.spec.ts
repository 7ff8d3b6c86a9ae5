import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..');
const EXAMPLE = join(root, 'test', 'client-example', 'console-walkthrough.ts');
const SCHEMA = join(root, 'test', 'client-example', 'openapi-schema.ts');

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
}

/** The client types, as a frontend team makes them: the openapi-typescript CLI over the document. */
function generateSchema(document: Document): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-openapi-'));
  try {
    const input = join(dir, 'openapi.json');
    const output = join(dir, 'schema.ts');
    writeFileSync(input, JSON.stringify(document));
    // A process of its own: openapi-typescript's dependencies are ES modules, which Jest's runtime cannot load.
    const cli = join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
    execFileSync(process.execPath, [cli, input, '--output', output], { stdio: 'pipe' });
    return readFileSync(output, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Type-checks the console example against a client generated from `document`; the generated module
 * stays in memory (the example imports it as ./openapi-schema). Returns the compiler's complaints.
 */
function typeCheckExample(document: Document): string[] {
  const schema = generateSchema(document);
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (file) => resolve(file) === SCHEMA || fileExists(file);
  host.readFile = (file) => (resolve(file) === SCHEMA ? schema : readFile(file));
  host.getSourceFile = (file, language, ...rest) =>
    resolve(file) === SCHEMA ? ts.createSourceFile(file, schema, language) : getSourceFile(file, language, ...rest);
  const program = ts.createProgram([EXAMPLE], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const line = where ? `line ${where.line + 1}: ` : '';
    return line + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  });
}

const committed = (): Document => JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as Document;

describe('the client generated from openapi.json', () => {
  // Generating and type-checking takes seconds, not milliseconds.
  jest.setTimeout(60_000);

  it('should type-check the console example (register, log in, create a key, read usage, top up)', () => {
    expect(dirname(SCHEMA)).toBe(dirname(EXAMPLE));
    expect(typeCheckExample(committed())).toEqual([]);
  });

  it('should fail to compile the example once a response used in it has no schema', () => {
    const document = committed();
    delete document.paths['/console/usage'].get.responses['200'].content;

    const complaints = typeCheckExample(document);

    expect(complaints.length).toBeGreaterThan(0);
    expect(complaints.join('\n')).toMatch(
      /'false'|does not satisfy the constraint 'true'|Property '\w+' does not exist/,
    );
  });
});
