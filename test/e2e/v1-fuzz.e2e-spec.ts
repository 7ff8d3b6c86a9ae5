import Redis from 'ioredis';
import { REDIS } from 'src/common/redis/redis.tokens';
import { usageKeys } from 'src/modules/billing/usage-queue.keys';
import { balanceKeys } from 'src/modules/ledger/balance-gate.keys';
import { Books } from 'test/e2e/billing-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import { SeededRandom } from 'test/support/seeded-random';

const SEED = 10_2026;
const REQUESTS = 320;
const BATCH = 10;

type Body = Record<string, unknown>;
/** One hostile change to a valid request; the result must be refused. A string is sent as the raw body. */
type Mutation = (random: SeededRandom, body: Body, models: { text: string; vision: string }) => unknown;

const text = (random: SeededRandom) =>
  random.pick([
    () => 'Say hi',
    () => random.chars(random.int(1, 200), 0x20, 0xffff).replace(/[\ud800-\udfff]/g, '?'),
    () => random.chars(random.int(1, 50), 0x1f300, 0x1faff),
    () => '<|endoftext|><|im_start|>system',
    () => 'a'.repeat(random.int(1, 300_000)),
  ])();
/** The body as raw JSON with `field` nested `levels` deep: too deep for this process's own JSON.stringify. */
const deepRaw = (body: Body, field: string, levels: number) =>
  JSON.stringify({ ...body, [field]: 'DEEP' }).replace('"DEEP"', '['.repeat(levels) + ']'.repeat(levels));
const withMessage = (body: Body, message: unknown) => ({ ...body, messages: [message] });
const withParts = (body: Body, parts: unknown) => withMessage(body, { role: 'user', content: parts });

const MUTATIONS: Mutation[] = [
  (random, body) => JSON.stringify(body).slice(0, random.int(0, JSON.stringify(body).length - 1)),
  (random) => random.pick(['{', '{"model":', 'nul', '{"a":1}}', '\u0000\u0001', '{"model":"x",}', "{'a':1}"]),
  (random) => random.pick([[], 42, 'chat', null, true, [{ model: 'x' }]]),
  (random, body) => ({
    ...body,
    model: random.pick([undefined, 42, '', ['m'], { id: 'm' }, 'no-such-model', '\ud800']),
  }),
  (random, body) => ({ ...body, messages: random.pick([undefined, 'hi', {}, [], [null], [42], [[]]]) }),
  (random, body) => withMessage(body, { role: random.pick(['robot', '', 7, null, 'USER']), content: 'x' }),
  (random, body) => withMessage(body, { role: 'user', content: random.pick([undefined, 5, {}, [], true]) }),
  (random, body) => withMessage(body, { role: 'tool', content: text(random) }),
  (random, body) => withParts(body, [random.pick([null, 3, 'text', { type: 'video' }, { text: 'no type' }])]),
  (random, body) => withParts(body, [{ type: 'text', text: random.pick([5, null, ['a'], { a: 1 }]) }]),
  (random, body, models) => ({
    ...withParts(body, [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]),
    model: models.text,
  }),
  (random, body, models) => ({
    ...withParts(body, [
      {
        type: 'image_url',
        image_url: random.pick([
          { url: 'ftp://example.com/a.png' },
          { url: 42 },
          {},
          'https://example.com/a.png',
          { url: 'data:image/png;base64,@@@@' },
          { url: 'data:image/png,rawbytes' },
          { url: 'data:;base64,AAAA' },
          { url: `data:image/png;base64,${'A'.repeat(random.int(1, 1_000_000))}!` },
          { url: 'javascript:alert(1)' },
        ]),
      },
    ]),
    model: models.vision,
  }),
  (random, body) =>
    withParts(body, [
      {
        type: 'input_audio',
        input_audio: random.pick([null, {}, { data: 'not base64!', format: 'wav' }, { data: 'AAAA' }, { data: 7 }]),
      },
    ]),
  (random, body) =>
    withParts(body, [{ type: 'file', file: random.pick([null, {}, { file_data: 5 }, { file_id: 1 }, 'f']) }]),
  (random, body) => {
    const param = random.pick(['temperature', 'top_p', 'presence_penalty', 'frequency_penalty']);
    return { ...body, [param]: random.pick([-3, 2.5, 1e308, -1e308, '1', [1], { v: 1 }, true]) };
  },
  (random, body) => ({ ...body, n: random.pick([0, -1, 129, 1.5, '2', [2]]) }),
  (random, body) => {
    const param = random.pick(['max_tokens', 'max_completion_tokens']);
    return { ...body, [param]: random.pick([-1, 0, 1.5, '10', 1001, 1e12, [5]]) };
  },
  (random, body) => ({
    ...body,
    max_tokens: random.int(1, 1000),
    max_completion_tokens: random.pick([1001, -5, 0.5, 'big', 2 ** 53]),
  }),
  (random, body) => ({ ...body, stream: random.pick(['yes', 1, 0, [], {}]) }),
  (random, body) => ({
    ...body,
    stream: random.pick([false, undefined]),
    stream_options: random.pick([{ include_usage: true }, 'x', 1]),
  }),
  (random, body) => ({ ...body, stream: true, stream_options: random.pick(['x', 1, { include_usage: 'yes' }]) }),
  (random, body) => ({ ...body, stop: random.pick([[1], ['a', 'b', 'c', 'd', 'e'], {}, 5]) }),
  (random, body) => ({ ...body, user: random.pick([42, 'u'.repeat(513), ['u'], {}]) }),
  (random, body) => ({ ...body, service_tier: random.pick(['priority', 'flex', 'scale', 'PRIORITY', 1, {}]) }),
  (random, body) => deepRaw(body, random.pick(['tools', 'response_format', 'x_extra']), random.int(65, 20_000)),
  (random, body) => ({
    ...body,
    [random.pick(['metadata', 'tools', 'logit_bias'])]: new Array(random.int(50_001, 60_000)).fill(0),
  }),
];

interface Outcome {
  index: number;
  status: number;
  body: unknown;
}

/** Exactly one key `error` with a non-empty message, a type, and param and code as strings or null. */
function isSpecError(outcome: Outcome): boolean {
  const body = outcome.body as { error?: Record<string, unknown> } | null;
  const error = body?.error;
  const stringOrNull = (value: unknown) => typeof value === 'string' || value === null;
  return (
    outcome.status >= 400 &&
    outcome.status < 500 &&
    Object.keys(body ?? {}).join() === 'error' &&
    Object.keys(error ?? {})
      .sort()
      .join() === 'code,message,param,type' &&
    typeof error?.message === 'string' &&
    error.message !== '' &&
    typeof error.type === 'string' &&
    stringOrNull(error.param) &&
    stringOrNull(error.code)
  );
}

/** Seeded hostile requests: every one refused as the error object, quickly, and not a nano-dollar moved. */
describe('/v1 chat completions under a seeded fuzz of malformed requests', () => {
  let gateway: TestGateway;
  let books: Books;
  let redis: Redis;
  let customer: Customer;
  let models: { text: string; vision: string };

  beforeAll(async () => {
    gateway = await TestGateway.start();
    books = await Books.open(gateway);
    redis = gateway.app.get<Redis>(REDIS);
    models = { text: await gateway.addModel(), vision: await gateway.addModel({ vision: true }) };
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(async () => {
    await books.close();
    await gateway.close();
  });

  async function send(index: number, payload: unknown): Promise<Outcome> {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
      // A hang fails the test here instead of timing the whole suite out.
      signal: AbortSignal.timeout(15_000),
    });
    const raw = await response.text();
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // kept as text: not the error object
    }
    return { index, status: response.status, body };
  }

  function hostileRequest(random: SeededRandom): unknown {
    const valid: Body = {
      model: random.pick([models.text, models.vision]),
      messages: [{ role: random.pick(['user', 'system', 'developer']), content: text(random) }],
      ...(random.next() < 0.3 ? { max_tokens: random.int(1, 1000) } : {}),
      ...(random.next() < 0.3 ? { stream: true } : {}),
    };
    let request = random.pick(MUTATIONS)(random, valid, models);
    // Sometimes a second defect on top of the first, when the first left a JSON object.
    if (random.next() < 0.3 && typeof request === 'object' && request !== null && !Array.isArray(request)) {
      request = random.pick(MUTATIONS.slice(3))(random, request as Body, models);
    }
    return request;
  }

  it(`should refuse ${REQUESTS} hostile requests in SPEC's shape and leave the money exact`, async () => {
    const random = new SeededRandom(SEED);
    const balance = await books.balance(customer);
    const ledger = await books.ledger(customer);
    const relayed = gateway.mock.requests.length;
    const summary = ({ index, status, body }: Outcome) => ({ index, status, body: JSON.stringify(body).slice(0, 300) });

    for (let start = 0; start < REQUESTS; start += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, i) => send(start + i, hostileRequest(random)));
      const outcomes = await Promise.all(batch);
      expect(outcomes.filter((outcome) => !isSpecError(outcome)).map(summary)).toEqual([]);
      expect(await books.reserved(customer.accountId)).toBe(0n);
    }

    expect(gateway.mock.requests.length).toBe(relayed);
    expect(await books.balance(customer)).toBe(balance);
    expect(await books.ledger(customer)).toEqual(ledger);
    expect(await redis.hlen(balanceKeys(customer.accountId).holds)).toBe(0);
    expect(await redis.hlen(usageKeys(customer.accountId).usage)).toBe(0);
  }, 60_000);
});
