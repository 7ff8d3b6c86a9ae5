import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_NODE_FLAGS } from 'src/config/api-runtime';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('API_NODE_FLAGS', () => {
  it('should be the flags of every production start of the API', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

    expect(scripts['start:prod']).toBe(`node ${API_NODE_FLAGS.join(' ')} dist/main.js`);
    expect(read('docker/Dockerfile')).toContain(
      `CMD [${['node', ...API_NODE_FLAGS, 'dist/main.js'].map((part) => JSON.stringify(part)).join(', ')}]`,
    );
    const yamlCommand = `command: [${['node', ...API_NODE_FLAGS, 'dist/main.js'].map((part) => `'${part}'`).join(', ')}]`;
    expect(read('docker/compose.yaml')).toContain(yamlCommand);
    expect(read('deploy/k8s/base/api.yaml')).toContain(yamlCommand);
  });
});
