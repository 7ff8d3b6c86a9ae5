import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorObjectDto, ErrorResponseDto } from 'src/common/openapi/error-response.dto';
import { AnthropicErrorDto } from 'src/modules/messages/dto/message.dto';

type Operation = OpenAPIObject['paths'][string]['get'] & {};
type ResponseObject = { description: string; content?: Record<string, unknown> };
interface SchemaLike {
  required?: string[];
  properties?: Record<string, { default?: unknown; description?: string }>;
}

const ERROR_SCHEMA = { $ref: '#/components/schemas/ErrorResponseDto' };
const ANTHROPIC_ERROR_SCHEMA = { $ref: '#/components/schemas/AnthropicErrorDto' };
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: `param` names the field or parameter',
  401: 'Missing or invalid credentials',
  403: 'Refused: the key is disabled or expired, its account suspended, the model not permitted for it, or the balance or the key spend limit too low',
  404: 'Not found',
  409: 'Conflict',
  429: 'Rate limited; see the retry-after header',
  500: 'Internal or upstream error',
  502: 'The upstream could not be reached',
  503: 'Overloaded or shutting down; retry after the retry-after header',
};
/**
 * Path parameters, described once by name: ids checked as UUIDs (uuidParam) and the operator's own
 * ids of models and channels.
 */
const PATH_PARAMETERS: Record<string, { format?: string; example: string }> = {
  accountId: { format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' },
  keyId: { format: 'uuid', example: '9b2d7c1e-4f3a-4e5b-8c6d-7e8f9a0b1c2d' },
  topupId: { format: 'uuid', example: '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9' },
  sessionId: { format: 'uuid', example: '7c9e6679-7425-40de-944b-e07fc1f90ae7' },
  modelId: { example: 'gpt-4o' },
  channelId: { example: 'openai-main' },
  groupId: { example: 'wholesale' },
  codeId: { format: 'uuid', example: '2a7d4c1b-6e5f-4a3b-9c8d-0e1f2a3b4c5d' },
  batchId: { format: 'uuid', example: '8d3e2f1a-0b9c-4d8e-a7f6-5e4d3c2b1a09' },
};
/** Changes refused for reasons of their own surface: a suspended account's console, an audit log that cannot be written. */
const CHANGE_ERROR_DESCRIPTIONS: Record<string, Record<number, string>> = {
  '/console/': { 403: 'The account is suspended (`account_suspended`): its console is read-only' },
  '/admin/': { 503: 'The audit log cannot be written now; nothing was changed' },
};
/** The wallets' notifications answer in the wallets' own shapes, not the error object. */
const OWN_ERROR_SHAPES = ['/webhooks/'];
/**
 * The routes marked `@RouteConfig(ANTHROPIC_WIRE)`: every error they answer, even one raised before the
 * handler, is Anthropic's error body (anthropicError), and overload is its 529 rather than 503.
 */
const ANTHROPIC_WIRE_PATHS = ['/v1/messages'];
/**
 * /v1 routes with a body that call an upstream but never answer that it could not be reached: the token
 * count falls back to the gateway's own count instead (docs/messages.md).
 */
const NEVER_UNREACHABLE_PATHS = ['/v1/messages/count_tokens'];
const ANTHROPIC_ERROR_DESCRIPTIONS: Record<number, string> = {
  500: 'api_error: internal or upstream error',
  502: 'api_error: the upstream could not be reached',
  529: 'overloaded_error: retry after the retry-after header',
};

/** Sorts object keys recursively, so the committed openapi.json only changes when the API does. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * The errors every operation of a kind can answer, from what it takes: a body or parameters can be
 * invalid (400), credentials missing (401), a path id unknown (404); /v1 also refuses (403), rate
 * limits (429) and may fail upstream or be overloaded (5xx).
 */
function errorStatusesOf(path: string, operation: Operation, method: string): number[] {
  const statuses: number[] = [];
  const parameters = (operation.parameters ?? []) as { in?: string }[];
  if (operation.requestBody || parameters.some((parameter) => parameter.in !== 'header')) {
    statuses.push(400);
  }
  if ((operation.security ?? []).length > 0) {
    statuses.push(401);
  }
  if (path.includes('{')) {
    statuses.push(404);
  }
  if (method !== 'get' && !path.startsWith('/console/auth/')) {
    statuses.push(...Object.keys(changeErrorsOf(path)).map(Number));
  }
  if (path.startsWith('/v1/')) {
    statuses.push(403, 429, speaksAnthropic(path) ? 529 : 503);
    if (operation.requestBody) {
      statuses.push(500, ...(NEVER_UNREACHABLE_PATHS.includes(path) ? [] : [502]));
    }
  }
  return statuses;
}

interface ParameterLike {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: { default?: unknown; [key: string]: unknown };
}

/** Path parameters get their type and example from PATH_PARAMETERS; optional query parameters state their default in words. */
function describeParameters(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as Operation[]) {
      for (const parameter of (operation.parameters ?? []) as ParameterLike[]) {
        const known = parameter.in === 'path' ? PATH_PARAMETERS[parameter.name] : undefined;
        if (known) {
          parameter.schema = { ...parameter.schema, type: 'string', ...known };
        }
        if (parameter.schema?.default !== undefined && !parameter.required) {
          parameter.description = withDefault(parameter.description, parameter.schema.default);
          delete parameter.schema.default;
        }
      }
    }
  }
}

function changeErrorsOf(path: string): Record<number, string> {
  return Object.entries(CHANGE_ERROR_DESCRIPTIONS).find(([prefix]) => path.startsWith(prefix))?.[1] ?? {};
}

function speaksAnthropic(path: string): boolean {
  return ANTHROPIC_WIRE_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * Every error response of /v1, /console and /admin carries the error object (docs/errors.md), declared
 * or added by rule; the Anthropic-wire routes carry Anthropic's error body instead.
 */
function addErrorResponses(document: OpenAPIObject): void {
  for (const [path, item] of Object.entries(document.paths)) {
    if (OWN_ERROR_SHAPES.some((prefix) => path.startsWith(prefix))) {
      continue;
    }
    const anthropic = speaksAnthropic(path);
    const schema = anthropic ? ANTHROPIC_ERROR_SCHEMA : ERROR_SCHEMA;
    for (const [method, operation] of Object.entries(item) as [string, Operation][]) {
      const responses = operation.responses as Record<string, ResponseObject>;
      for (const status of errorStatusesOf(path, operation, method)) {
        const description =
          (anthropic && ANTHROPIC_ERROR_DESCRIPTIONS[status]) ||
          (method !== 'get' && changeErrorsOf(path)[status]) ||
          ERROR_DESCRIPTIONS[status];
        responses[status] ??= { description };
      }
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400 && !response.content) {
          response.content = { 'application/json': { schema } };
        }
      }
    }
  }
}

const DEFAULT_SENTENCE = 'Default when left out: ';

function withDefault(description: string | undefined, value: unknown): string {
  const sentence = `${DEFAULT_SENTENCE}\`${JSON.stringify(value)}\`.`;
  return description ? `${description.replace(/\.$/, '')}. ${sentence}` : sentence;
}

/** The default a property's description states (describeDefaults), or undefined. */
export function documentedDefault(description: string | undefined): unknown {
  const stated = new RegExp(`${DEFAULT_SENTENCE}\`(.+?)\`\\.`).exec(description ?? '');
  return stated ? JSON.parse(stated[1]) : undefined;
}

/**
 * A property a client may leave out keeps its default in words only: generators such as
 * openapi-typescript read `default` as "always present" and would make `{ model, messages }`
 * an incomplete chat request.
 */
function describeDefaults(document: OpenAPIObject): void {
  for (const schema of Object.values(document.components?.schemas ?? {}) as SchemaLike[]) {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (property.default === undefined || (schema.required ?? []).includes(name)) {
        continue;
      }
      property.description = withDefault(property.description, property.default);
      delete property.default;
    }
  }
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('LLM Gateway')
    .setDescription(
      'One key and one base URL for every model family, in the OpenAI chat-completions wire format, ' +
        'billed by tokens against a prepaid balance. Amounts are exact decimal strings in USD.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A customer key, `sk-…`' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Console session' }, 'console')
    .addSecurity('admin', { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' })
    .addSecurity('metrics', { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when it is set' })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    // The controller method names are the operationIds: unique, readable, and kept once published.
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
    extraModels: [ErrorObjectDto, ErrorResponseDto, AnthropicErrorDto],
  });
  addErrorResponses(document);
  describeDefaults(document);
  describeParameters(document);
  return sortKeys(document) as OpenAPIObject;
}
