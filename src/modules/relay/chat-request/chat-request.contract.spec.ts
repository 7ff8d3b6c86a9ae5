import { OpenAPIObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { createApiApp } from 'src/app.factory';
import { ApiError } from 'src/common/errors/api-error';
import { loadConfig } from 'src/config/app-config';
import {
  ACCEPTED_MESSAGE_ROLES,
  CONTENT_PART_TYPES,
  ContentPartType,
  REQUEST_FIELDS,
  SERVICE_TIERS,
} from 'src/modules/relay/chat-request/chat-request.contract';
import { validateChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { CatalogModel } from 'src/modules/models/catalog.service';
import { buildOpenApiDocument, documentedDefault } from 'src/openapi';
import ts from 'typescript';

// The validator and the OpenAPI document both take their vocabulary from chat-request.contract.ts. These tests
// hold the generated document against what the validator does (the fields it reads, the roles and part types it
// accepts, what it requires, its bounds), so a field, role, part type or bound added on one side only fails here.

type Schema = SchemaObject | ReferenceObject;
type Body = Record<string, unknown>;

const model: CatalogModel = {
  id: 'vision-model',
  inputPrice: 1n,
  outputPrice: 1n,
  maxOutputTokens: 1000,
  vision: true,
  kind: 'chat',
  rpm: 60,
  tpm: 1000,
  created: 0,
  ownedBy: 'openai',
  routes: [],
};
const find = (id: string) => (id === model.id ? model : undefined);
/** A valid part of each type; the compiler asks for one when the contract gains a type. */
const PART_SAMPLES: Record<ContentPartType, Body> = {
  text: { type: 'text', text: 'Hi' },
  image_url: { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
  input_audio: { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
  file: { type: 'file', file: { file_id: 'file-1' } },
  refusal: { type: 'refusal', refusal: 'No.' },
};
/** Documented for clients, but relayed without a check. */
const UNCHECKED_PATHS = ['messages[].content[].refusal'];

let document: OpenAPIObject;

beforeAll(async () => {
  const app = await createApiApp(loadConfig({ NODE_ENV: 'development' }), pino({ level: 'silent' }), {
    preview: true,
  });
  document = buildOpenApiDocument(app);
  await app.close();
});

function resolve(schema: Schema): SchemaObject {
  if (!('$ref' in schema)) {
    // A named enum is a reference wrapped in allOf, beside the property's own description and example.
    if (schema.allOf?.length === 1 && !schema.type) {
      const { allOf, ...own } = schema;
      return { ...resolve(allOf[0]), ...own };
    }
    return schema;
  }
  const resolved = document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')];
  if (!resolved) {
    throw new Error(`${schema.$ref} is not in the document`);
  }
  return resolve(resolved);
}

function requestSchema(): SchemaObject {
  const body = document.paths['/v1/chat/completions'].post?.requestBody;
  return resolve((body as { content: Record<string, { schema: Schema }> }).content['application/json'].schema);
}

/** A top-level field's schema with its referenced parts merged in: the array form of `stop`, the object of `stream_options`. */
function fieldSchema(field: string): SchemaObject {
  const schema = resolve(requestSchema().properties![field]);
  const parts = [...(schema.allOf ?? []), ...(schema.oneOf ?? [])].map(resolve);
  const merged = Object.assign({}, ...parts.filter((part) => part.type !== 'string'), schema) as SchemaObject;
  // Defaults are stated in the description, so that generated clients keep these fields optional.
  const stated = documentedDefault(merged.description);
  return stated === undefined ? merged : { ...merged, default: stated };
}

const messageSchema = () => resolve(resolve(requestSchema().properties!.messages).items!);

/** The schemas of the content parts, by the `type` that selects each. */
function partSchemas(): Map<string, SchemaObject> {
  const content = resolve(messageSchema().properties!.content);
  const parts = (content.oneOf ?? []).map(resolve).find((branch) => branch.type === 'array')!.items!;
  const mapping = resolve(parts).discriminator?.mapping ?? {};
  return new Map(Object.entries(mapping).map(([type, $ref]) => [type, resolve({ $ref })]));
}

/** Every property path the schema documents ("messages[].content[].image_url.url"), and whether it is required. */
function documentedPaths(schema: Schema, prefix = '', paths = new Map<string, boolean>()): Map<string, boolean> {
  const resolved = resolve(schema);
  for (const branch of [...(resolved.oneOf ?? []), ...(resolved.allOf ?? []), ...(resolved.anyOf ?? [])]) {
    documentedPaths(branch, prefix, paths);
  }
  if (resolved.items) {
    documentedPaths(resolved.items, `${prefix}[]`, paths);
  }
  for (const [key, property] of Object.entries(resolved.properties ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    paths.set(path, paths.get(path) === true || (resolved.required ?? []).includes(key));
    documentedPaths(property, path, paths);
  }
  return paths;
}

/**
 * Validates `body` and returns the property paths the validator read. Each object is a proxy that hides
 * its keys, so the size walk reads none: only what the validator asks for by name is recorded, whether the
 * body holds it or not.
 */
function pathsRead(body: Body): Set<string> {
  const reads = new Set<string>();
  const watch = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) {
      return value.map((item) => watch(item, `${path}[]`));
    }
    if (typeof value !== 'object' || value === null) {
      return value;
    }
    return new Proxy(value, {
      ownKeys: () => [],
      get: (target, key) => {
        if (typeof key !== 'string') {
          return Reflect.get(target, key) as unknown;
        }
        const child = path === '' ? key : `${path}.${key}`;
        reads.add(child);
        return watch(Reflect.get(target, key), child);
      },
    });
  };
  validateChatRequest(watch(body, ''), find);
  return reads;
}

/** A valid request that takes every path of the validator: each documented role and part type once. */
function everyPathRequest(): Body {
  const roles = resolve(messageSchema().properties!.role).enum as string[];
  const parts = [...partSchemas().keys()].map((type) => PART_SAMPLES[type as ContentPartType]);
  return {
    model: model.id,
    messages: [
      ...roles.map((role) => ({ role, content: 'Hi', tool_call_id: 'call-1' })),
      { role: 'user', content: parts },
    ],
    stream: true,
    stream_options: { include_usage: true },
  };
}

function refusal(body: Body): ApiError | null {
  try {
    validateChatRequest(body, find);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
}

/** Every string literal in a source file: the words a module could accept without the contract. */
function literalsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(__dirname, file), 'utf8'), ts.ScriptTarget.Latest);
  const literals: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node)) {
      literals.push(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return literals;
}

/** Words to try as a role or part type: the documented ones and any the validator or contract spells out. */
function candidates(documented: string[]): string[] {
  const sources = ['chat-request.validator.ts', 'chat-request.contract.ts'];
  return [...new Set([...documented, ...sources.flatMap(literalsOf)])];
}

const sorted = (values: Iterable<string>) => [...values].sort();

describe('chat-completions request contract', () => {
  it('should document every path the validator reads, and read every documented path but the unchecked ones', () => {
    const read = pathsRead(everyPathRequest());
    const documented = documentedPaths(requestSchema());
    expect(sorted([...read].filter((path) => !documented.has(path)))).toEqual([]);
    expect(sorted([...documented.keys()].filter((path) => !read.has(path)))).toEqual(UNCHECKED_PATHS);
  });

  it('should document exactly the top-level fields of the contract, with their types and bounds', () => {
    expect(sorted(Object.keys(requestSchema().properties!))).toEqual(sorted(Object.keys(REQUEST_FIELDS)));
    for (const [field, rule] of Object.entries(REQUEST_FIELDS)) {
      expect({ field, ...fieldSchema(field) }).toMatchObject({ field, ...rule });
    }
    expect(fieldSchema('service_tier').enum).toEqual(SERVICE_TIERS);
  });

  it('should accept exactly the documented roles', () => {
    const documented = resolve(messageSchema().properties!.role).enum as string[];
    expect(sorted(documented)).toEqual(sorted(ACCEPTED_MESSAGE_ROLES));
    const accepted = candidates(documented).filter(
      (role) => refusal({ model: model.id, messages: [{ role, content: 'Hi', tool_call_id: 'call-1' }] }) === null,
    );
    expect(sorted(accepted)).toEqual(sorted(documented));
  });

  it('should accept exactly the documented content part types, each told apart by its type', () => {
    const parts = partSchemas();
    expect(sorted(parts.keys())).toEqual(sorted(CONTENT_PART_TYPES));
    for (const [type, schema] of parts) {
      expect(resolve(schema.properties!.type).enum).toEqual([type]);
    }
    const accepted = candidates([...parts.keys()]).filter((type) => {
      const part = { ...(PART_SAMPLES[type as ContentPartType] ?? PART_SAMPLES.text), type };
      return refusal({ model: model.id, messages: [{ role: 'user', content: [part] }] }) === null;
    });
    expect(sorted(accepted)).toEqual(sorted(parts.keys()));
  });

  it('should refuse a request or a part without a property the schema requires, and only then', () => {
    const required = requestSchema().required ?? [];
    for (const field of Object.keys(requestSchema().properties!)) {
      const body = everyPathRequest();
      delete body[field];
      const missing = refusal(body)?.message === `Missing required parameter: ${field}.`;
      expect({ field, missing }).toEqual({ field, missing: required.includes(field) });
    }
    for (const [type, schema] of partSchemas()) {
      for (const property of Object.keys(schema.properties!).filter((name) => name !== 'type')) {
        const part = { ...PART_SAMPLES[type as ContentPartType] };
        delete part[property];
        const param = refusal({ model: model.id, messages: [{ role: 'user', content: [part] }] })?.param ?? '';
        const refused = param.startsWith(`messages[0].content[0].${property}`);
        expect({ type, property, refused }).toEqual({ type, property, refused: schema.required!.includes(property) });
      }
    }
  });

  it('should hold each top-level field to the bounds, values and defaults the schema gives it', () => {
    const base = { model: model.id, messages: [{ role: 'user', content: 'Hi' }] };
    const accepts = (field: string, value: unknown) => refusal({ ...base, [field]: value }) === null;
    const refuses = (field: string, value: unknown) => refusal({ ...base, [field]: value })?.param === field;
    const list = (length: number, item: unknown) => new Array<unknown>(length).fill(item);
    // Each rule: whether the schema states it for a field, and whether the validator keeps to it there.
    const rules: Record<
      string,
      { states: (schema: SchemaObject) => boolean; holds: (field: string, schema: SchemaObject) => boolean }
    > = {
      minimum: {
        states: (schema) => schema.minimum !== undefined,
        holds: (field, { minimum }) => accepts(field, minimum) && refuses(field, minimum! - 1),
      },
      maximum: {
        states: (schema) => schema.maximum !== undefined,
        holds: (field, { maximum }) => accepts(field, maximum) && refuses(field, maximum! + 1),
      },
      integer: {
        states: (schema) => schema.type === 'integer',
        holds: (field) => refuses(field, 1.5),
      },
      maxLength: {
        states: (schema) => schema.maxLength !== undefined,
        holds: (field, { maxLength }) =>
          accepts(field, 'u'.repeat(maxLength!)) && refuses(field, 'u'.repeat(maxLength! + 1)),
      },
      minItems: {
        states: (schema) => schema.minItems !== undefined,
        holds: (field, { minItems }) =>
          accepts(field, list(minItems!, base.messages[0])) && refuses(field, list(minItems! - 1, 0)),
      },
      maxItems: {
        states: (schema) => schema.maxItems !== undefined,
        holds: (field, { maxItems }) =>
          accepts(field, list(maxItems!, 'x')) && refuses(field, list(maxItems! + 1, 'x')),
      },
      enum: {
        states: (schema) => schema.enum !== undefined,
        holds: (field, schema) =>
          schema.enum!.every((value) => accepts(field, value)) && refuses(field, 'undocumented'),
      },
    };
    const stated = new Set<string>();
    for (const field of Object.keys(requestSchema().properties!)) {
      const schema = fieldSchema(field);
      for (const [rule, { holds }] of Object.entries(rules).filter(([, { states }]) => states(schema))) {
        expect({ field, rule, holds: holds(field, schema) }).toEqual({ field, rule, holds: true });
        stated.add(rule);
      }
    }
    expect(sorted(stated)).toEqual(sorted(Object.keys(rules)));
    expect(validateChatRequest(base, find)).toMatchObject({
      n: fieldSchema('n').default as unknown,
      stream: fieldSchema('stream').default as unknown,
    });
  });
});
