import { ApiError } from 'src/common/errors/api-error';
import { JsonNumber, parseLosslessJson } from 'src/modules/models/price-book/lossless-json';
import {
  diffPriceBook,
  perTokenToNanosPerMillion,
  readGatewayPriceBook,
  readLiteLlmPriceBook,
} from 'src/modules/models/price-book/price-book';

const refusal = (run: () => unknown): ApiError => {
  try {
    run();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('expected a refusal');
};

describe('parseLosslessJson', () => {
  it('should keep number literals as written and read everything else as JSON.parse does', () => {
    const parsed = parseLosslessJson(' {"a": [1.50e-7, -0, true, null, "x\\u00e9\\n"], "__proto__": {}} ');
    expect(parsed).toEqual(
      new Map<string, unknown>([
        ['a', [new JsonNumber('1.50e-7'), new JsonNumber('-0'), true, null, 'xé\n']],
        ['__proto__', new Map()],
      ]),
    );
  });

  it.each(['{"a":1,}', '[01]', '{"a" 1}', '"\u0001"', '1 2', '[1.]'])('should refuse invalid JSON %j', (text) => {
    expect(() => parseLosslessJson(text)).toThrow(SyntaxError);
  });

  it('should refuse nesting deeper than 32', () => {
    expect(() => parseLosslessJson('['.repeat(40) + ']'.repeat(40))).toThrow(/deeper/);
  });
});

describe('perTokenToNanosPerMillion', () => {
  it.each([
    ['0.0000025', 2_500_000_000n],
    ['2.5e-06', 2_500_000_000n],
    ['1.25E-7', 125_000_000n],
    ['3e-15', 3n],
    ['0.000000000000001', 1n],
    ['1.2300000000e-13', 123n],
    ['0', 0n],
    ['-0.0', 0n],
    ['9.999999999999999', 9_999_999_999_999_999n],
  ])('should convert %s exactly', (literal, nanos) => {
    expect(perTokenToNanosPerMillion(literal)).toBe(nanos);
  });

  it.each([
    ['1.5e-16', /whole number of nano-dollars/],
    ['0.30000000000000001e-6', /whole number of nano-dollars/],
    ['-1e-6', /negative/],
    ['10', /largest price/],
    ['1e999999', /out of range/],
  ])('should refuse %s', (literal, reason) => {
    expect(perTokenToNanosPerMillion(literal)).toMatch(reason);
  });
});

describe('readLiteLlmPriceBook', () => {
  const read = (text: string, known = ['gpt-4o']) => readLiteLlmPriceBook(parseLosslessJson(text), new Set(known));

  it('should read the known models, skip the sample entry and list the rest as unknown', () => {
    const book = read(
      `{"sample_spec": {"input_cost_per_token": 0.0},
        "gpt-4o": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05,
                   "cache_read_input_token_cost": 1.25e-06, "max_tokens": 16384},
        "claude-2.1": {"input_cost_per_token": 8e-06, "output_cost_per_token": 2.4e-05}}`,
    );
    expect(book).toEqual({
      models: [
        {
          id: 'gpt-4o',
          inputPrice: 2_500_000_000n,
          outputPrice: 10_000_000_000n,
          cachedInputPrice: 1_250_000_000n,
          cacheWriteInputPrice: null,
        },
      ],
      unknown: ['claude-2.1'],
    });
  });

  it('should refuse a cost finer than the price precision, naming the model and field', () => {
    const error = refusal(() =>
      read('{"gpt-4o": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1.0000000000000001e-05}}'),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.param).toBe('gpt-4o.output_cost_per_token');
    expect(error.message).toContain("Model 'gpt-4o': output_cost_per_token 1.0000000000000001e-05");
  });

  it('should refuse a known model without an input or output cost, or with a cost that is not a number', () => {
    expect(refusal(() => read('{"gpt-4o": {"output_cost_per_token": 1e-05}}')).param).toBe(
      'gpt-4o.input_cost_per_token',
    );
    expect(
      refusal(() => read('{"gpt-4o": {"input_cost_per_token": "2.5e-06", "output_cost_per_token": 1e-05}}')).param,
    ).toBe('gpt-4o.input_cost_per_token');
  });
});

describe('readGatewayPriceBook and diffPriceBook', () => {
  const current = [
    { id: 'a', inputPrice: 1n, outputPrice: 2n, cachedInputPrice: null, cacheWriteInputPrice: null },
    { id: 'b', inputPrice: 5n, outputPrice: 6n, cachedInputPrice: 3n, cacheWriteInputPrice: null },
  ];

  it('should answer changed with before and after, the unchanged count and the unknown ids', () => {
    const book = readGatewayPriceBook({
      models: [
        { id: 'a', inputPrice: '0.000000001', outputPrice: '0.000000002' },
        { id: 'b', inputPrice: '0.000000005', outputPrice: '0.000000006', cachedInputPrice: null },
        { id: 'c', inputPrice: '1', outputPrice: '1' },
      ],
    });
    expect(diffPriceBook(current, book)).toEqual({
      changed: [
        {
          id: 'b',
          before: { inputPrice: 5n, outputPrice: 6n, cachedInputPrice: 3n, cacheWriteInputPrice: null },
          after: { inputPrice: 5n, outputPrice: 6n, cachedInputPrice: null, cacheWriteInputPrice: null },
        },
      ],
      unchanged: 1,
      unknown: ['c'],
    });
  });

  it.each([
    [{}, 'models'],
    [{ models: [{ inputPrice: '1', outputPrice: '1' }] }, 'models[0].id'],
    [{ models: [{ id: 'a', inputPrice: 1, outputPrice: '1' }] }, 'models[0].inputPrice'],
    [{ models: [{ id: 'a', inputPrice: '1', outputPrice: '1.0000000001' }] }, 'models[0].outputPrice'],
    [
      {
        models: [
          { id: 'a', inputPrice: '1', outputPrice: '1' },
          { id: 'a', inputPrice: '1', outputPrice: '1' },
        ],
      },
      'models[1].id',
    ],
  ])('should refuse %j naming %s', (body, param) => {
    const error = refusal(() => readGatewayPriceBook(body));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});
