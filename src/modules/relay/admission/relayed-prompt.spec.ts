import Fastify, { FastifyInstance } from 'fastify';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseJsonBodies } from 'src/common/http/json-body';
import { RelayedPrompt } from 'src/modules/relay/admission/relayed-prompt';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const BODY = { model: 'm', stream: true, messages: [{ role: 'user', content: 'Grüße, '.repeat(5_000) }] };

describe(RelayedPrompt.name, () => {
  let app: FastifyInstance;
  let received: { body: unknown }[];

  beforeAll(async () => {
    app = Fastify();
    parseJsonBodies(app);
    app.post('/', (request, reply) => {
      received.push(request);
      return reply.send({});
    });
    await app.ready();
  });
  afterAll(() => app.close());
  beforeEach(() => (received = []));

  /** A Fastify request carrying `payload` parsed as the API parses bodies (its bytes kept beside it). */
  async function parsedRequest(payload: string): Promise<{ body: unknown }> {
    await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload });
    return received[0];
  }

  it('should read the parsed body until it is dropped, then the same body parsed again from its bytes', async () => {
    const request = await parsedRequest(JSON.stringify(BODY));
    const prompt = new RelayedPrompt(request);
    const parsed = prompt.body;
    expect(parsed).toEqual(BODY);

    prompt.dropParsed();

    expect(request.body).toBeUndefined();
    const again = prompt.body;
    expect(again).toEqual(BODY);
    expect(again).not.toBe(parsed);
  });

  it('should let the parsed body be collected once dropped', async () => {
    const request = await parsedRequest(JSON.stringify(BODY));
    const prompt = new RelayedPrompt(request);
    const parsed = new WeakRef(prompt.body);
    received = [];

    prompt.dropParsed();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();

    expect(parsed.deref()).toBeUndefined();
    expect(prompt.body).toEqual(BODY);
  });

  it('should keep a body that has no bytes to stand for it (one the gateway built)', () => {
    const built = { model: 'm', messages: [] };
    const request = { body: built };
    const prompt = new RelayedPrompt(request);

    prompt.dropParsed();

    expect(request.body).toBe(built);
    expect(prompt.body).toBe(built);
  });
});
