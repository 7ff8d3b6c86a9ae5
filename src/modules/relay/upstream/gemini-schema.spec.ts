import { ApiError } from 'src/common/errors/api-error';
import { geminiSchema } from 'src/modules/relay/upstream/gemini-schema';

describe('geminiSchema', () => {
  it('should keep the subset Gemini takes and strip the rest', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: {
        city: { type: 'string', description: 'City name', format: 'hostname', minLength: 1 },
        unit: { type: 'string', enum: ['c', 'f'] },
        days: { type: 'integer', format: 'int32', minimum: 1, maximum: 7 },
        level: { enum: [1, 2, 3] },
      },
      required: ['city', 'ghost'],
    };
    expect(geminiSchema(schema, 'tools[0].function.parameters')).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name', minLength: 1 },
        unit: { type: 'string', enum: ['c', 'f'] },
        days: { type: 'integer', format: 'int32', minimum: 1, maximum: 7 },
        level: {},
      },
      required: ['city'],
    });
  });

  it('should turn type lists, const and oneOf into nullable, enum and anyOf', () => {
    const schema = {
      type: 'object',
      properties: {
        note: { type: ['string', 'null'] },
        mode: { const: 'fast' },
        value: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        either: { type: ['string', 'integer'] },
      },
    };
    expect(geminiSchema(schema, 'p').properties).toEqual({
      note: { type: 'string', nullable: true },
      mode: { enum: ['fast'] },
      value: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    });
  });

  it('should inline $defs references, and refuse recursive ones naming the parameter', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
      properties: { at: { $ref: '#/$defs/point' }, path: { type: 'array', items: { $ref: '#/$defs/point' } } },
    };
    const point = { type: 'object', properties: { x: { type: 'number' } } };
    expect(geminiSchema(schema, 'p').properties).toEqual({ at: point, path: { type: 'array', items: point } });

    const recursive = {
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    };
    expect(() => geminiSchema(recursive, 'tools[1].function.parameters')).toThrow(ApiError);
    try {
      geminiSchema(recursive, 'tools[1].function.parameters');
    } catch (error) {
      expect((error as ApiError).param).toBe('tools[1].function.parameters');
    }
  });

  it('should bound what self-multiplying references grow to', () => {
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i < 30; i++) {
      defs[`d${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } },
      };
    }
    expect(() => geminiSchema({ $defs: defs, $ref: '#/$defs/d29' }, 'p')).toThrow(/too large/);
  });
});
