import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const SECRETS = ['JWT_SECRET', 'SECRETS_KEY', 'ADMIN_TOKEN'];

/** Every environment variable src/config reads: EnvDto's fields, and any `dto.X` / `env.X` / `process.env.X`. */
function variablesReadInConfig(): string[] {
  const sources = readdirSync(join(__dirname))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .map((file) => readFileSync(join(__dirname, file), 'utf8'));
  const names = new Set<string>();
  for (const source of sources) {
    for (const [, name] of source.matchAll(/^ {2}([A-Z][A-Z0-9_]+)\??: /gm)) {
      names.add(name);
    }
    for (const [, name] of source.matchAll(/\b(?:dto|env)\.([A-Z][A-Z0-9_]+)\b/g)) {
      names.add(name);
    }
  }
  return [...names].sort();
}

describe('environment documentation', () => {
  const variables = variablesReadInConfig();

  it('should find the variables the processes read', () => {
    expect(variables).toEqual(expect.arrayContaining(['NODE_ENV', 'DATABASE_URL', ...SECRETS, 'SETTLEMENT_LEASE_MS']));
  });

  it('should list every variable in .env.example', () => {
    const example = read('.env.example');
    const missing = variables.filter((name) => !new RegExp(`^(# )?${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it("should list every variable in the README's configuration table", () => {
    const readme = read('README.md');
    const missing = variables.filter((name) => !readme.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
  });

  it('should ship no secret values in .env.example', () => {
    const example = read('.env.example');
    for (const name of [...SECRETS, 'POSTGRES_PASSWORD']) {
      expect(example).toMatch(new RegExp(`^${name}=$`, 'm'));
    }
  });

  it('should take every secret of docker compose from docker/.env, required', () => {
    const compose = read('docker/compose.yaml');
    for (const name of [...SECRETS, 'POSTGRES_PASSWORD']) {
      const values = [...compose.matchAll(new RegExp(`^\\s+${name}: (.*)$`, 'gm'))].map((match) => match[1]);
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) {
        expect(value).toMatch(new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`));
      }
    }
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\/postgres:\$\{POSTGRES_PASSWORD:\?[^}]+\}@/);
    expect(compose).toMatch(/env_file: \.env/);
  });
});
