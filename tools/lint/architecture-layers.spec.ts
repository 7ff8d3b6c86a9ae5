import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layerRules, readLayerTable, unitsOf } from 'tools/lint/architecture-layers.cjs';

const ROOT = join(__dirname, '..', '..');

function architecture(rows: string[]): string {
  return [
    '# Architecture',
    '',
    '## Layers',
    '',
    '| layer | what | imports |',
    '| - | - | - |',
    ...rows,
    '',
    '## Next',
    '',
  ].join('\n');
}

/** A repository with the given files and folders under src/ and the given docs/architecture.md. */
function repository(paths: string[], markdown: string): string {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'docs', 'architecture.md'), markdown);
  for (const path of paths) {
    mkdirSync(join(root, 'src', path.endsWith('.ts') ? '.' : path), { recursive: true });
    if (path.endsWith('.ts')) {
      writeFileSync(join(root, 'src', path), '');
    }
  }
  return root;
}

/** Whether the rules refuse an import from one file to another. */
function refused(rules: ReturnType<typeof layerRules>, from: string, to: string): boolean {
  return rules.some((rule) => new RegExp(rule.from.path).test(from) && new RegExp(rule.to.path).test(to));
}

describe('the layer order read from docs/architecture.md', () => {
  const roots: string[] = [];
  afterEach(() => roots.splice(0).forEach((root) => rmSync(root, { recursive: true, force: true })));
  const make = (paths: string[], markdown: string) => {
    const root = repository(paths, markdown);
    roots.push(root);
    return root;
  };

  it('places every folder of src/ and src/modules/ of this repository, with relay between the features and the domain', () => {
    const rules = layerRules(ROOT);

    expect(refused(rules, 'src/modules/ledger/ledger.repository.ts', 'src/modules/billing/metering.service.ts')).toBe(
      true,
    );
    expect(refused(rules, 'src/modules/relay/relay.service.ts', 'src/modules/responses/responses.service.ts')).toBe(
      true,
    );
    expect(refused(rules, 'src/modules/billing/metering.service.ts', 'src/modules/relay/relay.service.ts')).toBe(true);
    expect(refused(rules, 'src/modules/responses/responses.service.ts', 'src/modules/relay/relay.service.ts')).toBe(
      false,
    );
    expect(refused(rules, 'src/common/redis/redis-client.ts', 'src/config/app-config.ts')).toBe(false);
  });

  it('refuses an import up the table or back along a row, and allows one down', () => {
    const root = make(
      ['main.ts', 'api.module.ts', 'modules/billing', 'modules/mail', 'modules/ledger', 'common'],
      architecture([
        '| entrypoints | `main.ts`, `api.module.ts` | everything below |',
        '| domain | `billing`, `mail` | lower domain modules |',
        '| money | `ledger` | `common` |',
        '| ground | `common` (errors) | nothing |',
      ]),
    );
    const rules = layerRules(root);

    expect(refused(rules, 'src/modules/ledger/a.ts', 'src/modules/billing/b.ts')).toBe(true);
    expect(refused(rules, 'src/modules/mail/a.ts', 'src/modules/billing/b.ts')).toBe(true);
    expect(refused(rules, 'src/common/a.ts', 'src/main.ts')).toBe(true);
    expect(refused(rules, 'src/modules/billing/a.ts', 'src/modules/mail/b.ts')).toBe(false);
    expect(refused(rules, 'src/modules/billing/a.ts', 'src/common/b.ts')).toBe(false);
    // The entrypoints are one unit: they import each other.
    expect(refused(rules, 'src/api.module.ts', 'src/main.ts')).toBe(false);
    expect(refused(rules, 'src/main.ts', 'src/api.module.ts')).toBe(false);
  });

  it('fails when a folder of src/modules or a file of src/ has no row', () => {
    const root = make(
      ['main.ts', 'openapi.ts', 'openapi.spec.ts', 'modules/billing', 'modules/partitions'],
      architecture(['| entrypoints | `main.ts` | everything below |', '| domain | `billing` | |']),
    );

    expect(() => layerRules(root)).toThrow(
      'the Layers table of docs/architecture.md places none of: src/modules/partitions/, src/openapi.ts',
    );
  });

  it('gives a module the table names before its folder exists a place of its own', () => {
    const root = make(['modules/chat-completions'], '');
    const rows = readLayerTable(
      architecture(['| features | `chat-completions` | |', '| relay | `relay`: the engine the features share | |']),
    );

    expect(unitsOf(rows, root).map((unit) => unit.paths)).toEqual([
      ['src/modules/chat-completions/'],
      ['src/modules/relay/'],
    ]);
  });

  it('refuses a table that backticks anything but names, or names a module twice', () => {
    expect(() => readLayerTable(architecture(['| entrypoints | `main.ts`, the `/v1` routes | |']))).toThrow(
      '/v1 is not a module, a file or a folder of src/',
    );
    expect(() =>
      unitsOf(readLayerTable(architecture(['| features | `auth` | |', '| domain | `auth` | |'])), ROOT),
    ).toThrow('places auth more than once');
    expect(() => readLayerTable('# Architecture\n')).toThrow('no "## Layers" section');
  });
});
