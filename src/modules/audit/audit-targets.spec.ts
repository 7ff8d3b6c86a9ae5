import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUDIT_TARGETS, auditTargetOf } from 'src/modules/audit/audit-targets';

/** The admin changes the API serves, from the committed OpenAPI document (a test keeps it current). */
function adminChanges(): string[] {
  const document = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/admin/'))
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => method !== 'get')
        .map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    )
    .sort();
}

describe('AUDIT_TARGETS', () => {
  it('should name the target of every admin change the API serves, and no route it does not serve', () => {
    expect(Object.keys(AUDIT_TARGETS).sort()).toEqual(adminChanges());
  });

  it('should still log a change of a route nobody listed, by its path', () => {
    expect(auditTargetOf('POST', '/admin/new-thing').type).toBe('unlisted');
    expect(auditTargetOf('PUT', '/admin/channels/:channelId').id({ channelId: 'main' })).toBe('main');
    expect(
      auditTargetOf('PUT', '/admin/accounts/:accountId/rate-limits/:modelId').id({ accountId: 'a', modelId: 'm/x' }),
    ).toBe('a/m/x');
  });
});
