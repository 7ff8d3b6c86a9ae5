import { ApiError } from 'src/common/errors/api-error';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { withFields } from 'src/common/with-fields';

type Json = Record<string, unknown>;

/**
 * The JSON Schema keywords Gemini's function `parameters` take (its OpenAPI 3.0 `Schema` subset).
 * Everything else is stripped: additionalProperties, $schema, $id, $comment, patternProperties,
 * not, if/then/else, dependencies, examples, readOnly/writeOnly, const (turned into a one-value enum
 * first), oneOf (turned into anyOf first), allOf (one member is used in its place; more are stripped),
 * non-string enums and formats Gemini does not know.
 */
const KEPT = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'minProperties',
  'maxProperties',
  'default',
  'example',
  'propertyOrdering',
]);
const FORMATS = new Set(['enum', 'date-time', 'float', 'double', 'int32', 'int64']);
/** Schemas after $ref inlining: bounds what a schema of self-multiplying references can grow to. */
const MAX_SCHEMA_NODES = 10_000;

/** A tool's JSON-schema `parameters` in the subset Gemini accepts; `param` names it in a 400. */
export function geminiSchema(schema: Json, param: string): Json {
  const defs = withFields(asRecord(schema.definitions), asRecord(schema.$defs));
  const budget = { nodes: 0 };
  return clean(schema, { defs, resolving: new Set(), budget, param });
}

interface Walk {
  defs: Json;
  resolving: Set<string>;
  budget: { nodes: number };
  param: string;
}

const asRecord = (value: unknown): Json => (isRecord(value) ? value : {});

function clean(input: Json, walk: Walk): Json {
  if (++walk.budget.nodes > MAX_SCHEMA_NODES) {
    throw ApiError.invalid(`${walk.param} is too large once its $refs are resolved.`, walk.param);
  }
  if (typeof input.$ref === 'string') {
    return resolved(input.$ref, walk);
  }
  const schema = normalized(input);
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) {
      out[key] = value;
    }
  }
  if (typeof out.format === 'string' && !FORMATS.has(out.format)) {
    delete out.format;
  }
  if (Array.isArray(out.enum) && !out.enum.every((value) => typeof value === 'string')) {
    delete out.enum;
  }
  if (isRecord(schema.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, child]) => [name, clean(asRecord(child), walk)]),
    );
    if (Array.isArray(schema.required)) {
      out.required = schema.required.filter((name) => typeof name === 'string' && name in asRecord(out.properties));
    }
  }
  if (isRecord(schema.items)) {
    out.items = clean(schema.items, walk);
  }
  if (Array.isArray(schema.anyOf)) {
    out.anyOf = schema.anyOf.map((member) => clean(asRecord(member), walk));
  }
  return out;
}

/** The keywords Gemini lacks that have an equivalent it has: type lists, const, oneOf, a lone allOf. */
function normalized(input: Json): Json {
  let schema = { ...input };
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && isRecord(schema.allOf[0])) {
    schema = withFields(schema.allOf[0], withFields(schema, { allOf: undefined }));
  }
  if (Array.isArray(schema.type)) {
    const types = (schema.type as unknown[]).filter((type) => type !== 'null');
    if (types.length < schema.type.length) {
      schema.nullable = true;
    }
    if (types.length === 1) {
      schema.type = types[0];
    } else {
      delete schema.type;
      schema.anyOf ??= types.map((type): Json => ({ type }));
    }
  }
  if (schema.const !== undefined) {
    schema.enum = [schema.const];
  }
  if (Array.isArray(schema.oneOf) && !schema.anyOf) {
    schema.anyOf = schema.oneOf;
  }
  return schema;
}

function resolved(ref: string, walk: Walk): Json {
  const match = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref);
  const target = match ? walk.defs[match[1]] : undefined;
  if (!isRecord(target)) {
    throw ApiError.invalid(`${walk.param} refers to ${ref}, which is not one of its $defs.`, walk.param);
  }
  if (walk.resolving.has(ref)) {
    throw ApiError.invalid(`${walk.param} is recursive (${ref}), which Gemini cannot take.`, walk.param);
  }
  walk.resolving.add(ref);
  try {
    return clean(target, walk);
  } finally {
    walk.resolving.delete(ref);
  }
}
