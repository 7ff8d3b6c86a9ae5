import { randomUUID } from 'node:crypto';
import { ADMIN_PERMISSIONS, ROLE_PERMISSIONS } from 'src/common/decorators/admin-permissions';
import { ADMIN_ROLES, AdminRole } from 'src/config/admin-tokens';
import { AdminRoute, adminRoutesOf } from 'test/e2e/admin-routes';
import { expectError } from 'test/e2e/e2e-helpers';
import { HttpResult, TestGateway } from 'test/support/gateway';

const TOKENS: Record<Exclude<AdminRole, 'admin'>, string> = {
  operator: `operator-token-${randomUUID()}`,
  finance: `finance-token-${randomUUID()}`,
  read: `read-token-${randomUUID()}`,
};
const NAMES: Record<AdminRole, string> = { admin: 'default', operator: 'ops', finance: 'books', read: 'viewer' };

/** Path parameters filled with values that exist nowhere: an allowed change then fails as 400 or 404, changing nothing. */
const concretePath = (path: string) =>
  path.replace(/:([A-Za-z]+)/g, (_match, name: string) =>
    name.endsWith('Id') && name !== 'modelId' && name !== 'channelId' ? randomUUID() : `roles-${name}`,
  );

/**
 * Every admin route Nest registered, called with every role's token: the route table is read from the
 * running app, so a route added later is in the matrix without editing this file, and one without a
 * `@Permission` fails the first test.
 */
describe('admin: roles of admin tokens, on every admin route', () => {
  let gateway: TestGateway;
  let routes: AdminRoute[];
  const answers = new Map<string, HttpResult>();
  const key = (role: AdminRole, route: AdminRoute) => `${role} ${route.method} ${route.path}`;

  beforeAll(async () => {
    gateway = await TestGateway.start({
      ADMIN_TOKENS: `${NAMES.operator}@operator:${TOKENS.operator},${NAMES.finance}@finance:${TOKENS.finance},${NAMES.read}@read:${TOKENS.read}`,
    });
    routes = adminRoutesOf(gateway.app);
    // One request per role and route, in sequence: a few dozen small requests.
    for (const route of routes) {
      for (const role of ADMIN_ROLES) {
        const token = role === 'admin' ? gateway.adminToken : TOKENS[role];
        const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
        answers.set(key(role, route), await gateway.call(route.method, concretePath(route.path), { token, body }));
      }
    }
  });
  afterAll(() => gateway.close());

  it('should find the admin routes Nest registered, each declaring a permission; GET exactly the `read` ones', () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
    const fastify = gateway.app.getHttpAdapter().getInstance();
    for (const route of routes) {
      expect(fastify.hasRoute({ method: route.method, url: route.path })).toBe(true);
    }
    const undeclared = routes.filter((route) => route.permission === undefined).map((r) => `${r.method} ${r.path}`);
    expect(undeclared).toEqual([]);
    for (const route of routes) {
      expect({ route: `${route.method} ${route.path}`, read: route.permission === 'read' }).toEqual({
        route: `${route.method} ${route.path}`,
        read: route.method === 'GET',
      });
    }
  });

  it.each(ADMIN_ROLES)('should refuse %s exactly the routes its role lacks, with 403 naming the permission', (role) => {
    for (const route of routes) {
      const response = answers.get(key(role, route))!;
      const allowed = role === 'admin' || ROLE_PERMISSIONS[role].has(route.permission!);
      const where = `${role} ${route.method} ${route.path} answered ${response.status} ${response.text.slice(0, 200)}`;
      if (allowed) {
        // Past the guard: the handler answered, perhaps refusing the made-up ids or the empty body.
        expect({ where, passed: response.status < 500 && response.status !== 401 && response.status !== 403 }).toEqual({
          where,
          passed: true,
        });
      } else {
        expectError(response, 403, { code: 'admin_permission_required', param: null });
        expect({ where, message: response.body.error.message }).toEqual({
          where,
          message: expect.stringContaining(`'${route.permission}'`),
        });
      }
    }
  });

  it('should hold the roles to what the operators were promised', () => {
    const refused = (role: AdminRole, method: string, path: string) => {
      const route = routes.find((candidate) => candidate.method === method && candidate.path === path);
      expect(route).toBeDefined();
      return answers.get(key(role, route!))!.status === 403;
    };
    const changes = routes.filter((route) => route.method !== 'GET');
    // read: GET only.
    expect(changes.filter((route) => !refused('read', route.method, route.path))).toEqual([]);
    // finance: no channels, models or price books; money yes.
    const catalog = changes.filter((route) => /^\/admin\/(channels|models|price-books)/.test(route.path));
    expect(catalog.length).toBeGreaterThanOrEqual(5);
    expect(catalog.filter((route) => !refused('finance', route.method, route.path))).toEqual([]);
    expect(refused('finance', 'POST', '/admin/accounts/:accountId/adjustments')).toBe(false);
    expect(refused('finance', 'POST', '/admin/topups/:topupId/recheck')).toBe(false);
    // operator: channels, models, codes; no money.
    expect(refused('operator', 'PUT', '/admin/models/:modelId')).toBe(false);
    expect(refused('operator', 'PUT', '/admin/channels/:channelId')).toBe(false);
    expect(refused('operator', 'POST', '/admin/redemption-codes')).toBe(false);
    expect(refused('operator', 'POST', '/admin/accounts/:accountId/adjustments')).toBe(true);
    expect(refused('operator', 'POST', '/admin/topups/:topupId/recheck')).toBe(true);
    expect(refused('operator', 'PUT', '/admin/payments/settings')).toBe(true);
    expect(new Set(routes.map((route) => route.permission))).toEqual(new Set(ADMIN_PERMISSIONS));
  });

  it("should audit a change with the token's name and role, and a refused one not at all", async () => {
    const channelId = `roles-${randomUUID().slice(0, 8)}`;
    const channel = { type: 'openai', baseUrl: `${gateway.mock.url}/v1`, apiKey: 'sk-upstream-roles', priority: 0 };
    expect(
      (await gateway.call('PUT', `/admin/channels/${channelId}`, { token: TOKENS.operator, body: channel })).status,
    ).toBe(200);
    const refusal = await gateway.call('DELETE', `/admin/channels/${channelId}`, { token: TOKENS.finance });
    expectError(refusal, 403, { code: 'admin_permission_required' });
    expect(refusal.body.error.message).toContain("'catalog:write'");
    expect(refusal.body.error.message).toContain("'finance'");

    const audit = await gateway.call('GET', `/admin/audit?targetType=channel&targetId=${channelId}`, {
      token: TOKENS.read,
    });
    expect(audit.status).toBe(200);
    expect(
      audit.body.data.map((entry: Record<string, unknown>) => [entry.actor, entry.actorRole, entry.method]),
    ).toEqual([['ops', 'operator', 'PUT']]);
  });
});
