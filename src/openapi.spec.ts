import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedDefault } from 'src/openapi';

/** The committed document (generated-artifacts.e2e-spec.ts proves it is what the code generates). */
const document = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
        responses: Record<string, { content?: unknown }>;
      }
    >
  >;
  components: { schemas: Record<string, Schema> };
};

interface Schema {
  type?: string;
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  enum?: unknown[];
  example?: unknown;
  pattern?: string;
  default?: unknown;
  description?: string;
  required?: string[];
  properties?: Record<string, Schema>;
}

const MONEY_FIELDS =
  /^(amount|balance|balanceAfter|cost|credit|spent|spendLimit|totalCredited|inputPrice|outputPrice|cachedInputPrice)$/;
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, operation })),
);
const properties = Object.entries(document.components.schemas).flatMap(([schema, { properties = {} }]) =>
  Object.entries(properties).map(([name, property]) => ({ where: `${schema}.${name}`, name, property })),
);

describe('openapi.json', () => {
  it('should give every operation a unique operationId', () => {
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('should give every operation a success answer with a schema (204 has none by definition)', () => {
    const untyped = operations
      .filter(({ operation }) => {
        const success = Object.entries(operation.responses).filter(([status]) => /^2/.test(status));
        return success.length === 0 || success.some(([status, response]) => status !== '204' && !response.content);
      })
      .map(({ name }) => name);
    expect(untyped).toEqual([]);
  });

  it("should give every error answer a schema: SPEC's error object, Anthropic's on its own routes, the wallets' webhooks apart", () => {
    const errors = operations.flatMap(({ name, path, operation }) =>
      Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .map(([status, response]) => ({ name: `${name} ${status}`, path, response: JSON.stringify(response) })),
    );
    expect(errors.filter(({ response }) => !response.includes('"content"')).map(({ name }) => name)).toEqual([]);
    // Probes answer in their own shape too.
    // `/v1/messages` and every path under it answer every error in Anthropic's shape, as its clients parse it.
    const isAnthropic = (path: string) => path === '/v1/messages' || path.startsWith('/v1/messages/');
    const anthropic = errors.filter(({ path }) => isAnthropic(path));
    const console = errors.filter(
      ({ path }) => !path.startsWith('/webhooks/') && !path.startsWith('/health/') && !isAnthropic(path),
    );
    expect(console.length).toBeGreaterThan(50);
    expect(
      console.filter(({ response }) => !response.includes('#/components/schemas/ErrorResponseDto')).map((e) => e.name),
    ).toEqual([]);
    expect(anthropic.length).toBeGreaterThan(3);
    expect(
      anthropic
        .filter(({ response }) => !response.includes('#/components/schemas/AnthropicErrorDto'))
        .map((e) => e.name),
    ).toEqual([]);
  });

  it('should type every property and give it an example (a reference or a list of references carries its own)', () => {
    const typed = (schema: Schema): boolean =>
      Boolean(schema.type || schema.$ref || schema.allOf?.length || schema.oneOf?.length);
    const isReference = (schema: Schema) =>
      Boolean(schema.$ref || schema.allOf || schema.oneOf || (schema.type === 'array' && schema.items?.$ref));
    expect(properties.filter(({ property }) => !typed(property)).map(({ where }) => where)).toEqual([]);
    expect(
      properties
        .filter(({ property }) => !isReference(property) && property.example === undefined)
        .map(({ where }) => where),
    ).toEqual([]);
  });

  it('should never require a property that has a default (a client may leave it out)', () => {
    const required = Object.entries(document.components.schemas).flatMap(([name, schema]) =>
      Object.entries(schema.properties ?? {})
        .filter(([property, value]) => value.default !== undefined && (schema.required ?? []).includes(property))
        .map(([property]) => `${name}.${property}`),
    );
    expect(required).toEqual([]);
    // The chat request: {model, messages} alone is a whole request, and its defaults are stated in words.
    const request = document.components.schemas.ChatCompletionRequestDto;
    expect(request.required).toEqual(['model', 'messages']);
    const defaults = ['temperature', 'n', 'stream'].map((name) =>
      documentedDefault(request.properties![name].description),
    );
    expect(defaults).toEqual([1, 1, false]);
  });

  it('should type every parameter with an example or a named schema, and state defaults in words', () => {
    const parameters = operations.flatMap(({ name, operation }) =>
      (operation.parameters ?? []).map((parameter) => ({
        where: `${name} ${parameter.in}:${parameter.name}`,
        parameter,
      })),
    );
    expect(parameters.length).toBeGreaterThan(30);
    const described = ({ schema }: { schema: Schema }) =>
      Boolean(schema.type && (schema.example !== undefined || schema.items?.$ref)) ||
      Boolean(schema.$ref || schema.allOf);
    expect(parameters.filter(({ parameter }) => !described(parameter)).map(({ where }) => where)).toEqual([]);
    expect(
      parameters
        .filter(({ parameter }) => parameter.schema.enum || parameter.schema.default !== undefined)
        .map(({ where }) => where),
    ).toEqual([]);
  });

  it('should name every enum (a schema of its own, referenced)', () => {
    const inline = properties.filter(({ property }) => property.enum || property.items?.enum).map(({ where }) => where);
    expect(inline).toEqual([]);
  });

  it('should write money as a string with a pattern', () => {
    const money = properties.filter(({ name }) => MONEY_FIELDS.test(name));
    expect(money.length).toBeGreaterThan(15);
    const loose = money.filter(({ property }) => property.type !== 'string' || !property.pattern);
    expect(loose.map(({ where }) => where)).toEqual([]);
  });
});
