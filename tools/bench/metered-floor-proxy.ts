import Redis from 'ioredis';
import { createHash } from 'node:crypto';
import { Agent, createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { PassthroughProxy } from 'tools/bench/passthrough-proxy';

/*
 * The floor for a Node gateway that keeps the money rules: the passthrough proxy plus the least work
 * a metered request cannot skip. It parses the client's JSON, hashes the key and finds it in a map,
 * awaits one Redis script that counts the request and its tokens and holds its cost, sends the body
 * re-serialised with the upstream's model name, reads the answer's usage (the whole JSON answer, or
 * the stream as it passes), records the usage in one Redis script sent before the last bytes and not
 * awaited, and answers. No framework, validation, catalog, limits headers, metrics or logs: what the
 * gateway costs beyond this row is the price of those; what this costs beyond the passthrough is the
 * price of the metering itself.
 */

const ADMIT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
local tokens = redis.call('INCRBY', KEYS[2], ARGV[1])
if tokens == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[2], 60000) end
local held = redis.call('INCRBY', KEYS[3], ARGV[2])
if held > tonumber(ARGV[3]) then
  redis.call('DECRBY', KEYS[3], ARGV[2])
  return 0
end
redis.call('HSET', KEYS[4], ARGV[4], ARGV[2])
return 1`;

const RECORD = `
local held = redis.call('HGET', KEYS[1], ARGV[1])
if not held then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DECRBY', KEYS[2], held)
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '100000', '*', 'r', ARGV[1], 'u', ARGV[2])
return 1`;

const KEYS = ['floor:{a}:rpm', 'floor:{a}:tpm', 'floor:{a}:held', 'floor:{a}:holds'];
const RECORD_KEYS = ['floor:{a}:holds', 'floor:{a}:held', 'floor:{a}:usage'];
const USAGE = /"usage":(\{[^}]*\})/g;

interface FloorRedis extends Redis {
  floorAdmit(...args: (string | number)[]): Promise<number>;
  floorRecord(...args: (string | number)[]): Promise<number>;
}

export function startMeteredFloorProxy(target: string, redisUrl: string, port = 0): Promise<PassthroughProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
  const redis = new Redis(redisUrl) as FloorRedis;
  redis.defineCommand('floorAdmit', { numberOfKeys: 4, lua: ADMIT });
  redis.defineCommand('floorRecord', { numberOfKeys: 3, lua: RECORD });
  // Any key the client presents maps to the one account: a hash and a map lookup, as a cached key would.
  const accounts = new Map<string, string>();
  let sequence = 0;

  const relay = async (req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> => {
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const keyHash = createHash('sha256')
      .update(req.headers.authorization ?? '')
      .digest('hex');
    if (!accounts.has(keyHash)) {
      accounts.set(keyHash, 'a');
    }
    const requestId = `r${++sequence}`;
    const text = raw.length;
    const admitted = await redis.floorAdmit(...KEYS, Math.ceil(text / 2) + 64, 1000, 1e15, requestId);
    if (admitted !== 1) {
      res.writeHead(403).end();
      return;
    }
    const payload = JSON.stringify({ ...body, model: body.model });
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: 'POST',
        path: req.url,
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        agent,
      },
      (answer) => {
        const chunks: string[] = [];
        answer.setEncoding('utf8');
        const stream = body.stream === true;
        if (stream) {
          res.writeHead(answer.statusCode ?? 502, { 'content-type': 'text/event-stream' });
        }
        answer.on('data', (chunk: string) => {
          chunks.push(chunk);
          if (stream) {
            res.write(chunk);
          }
        });
        answer.on('end', () => {
          const whole = chunks.join('');
          let usage = '';
          for (const match of whole.matchAll(USAGE)) {
            usage = match[1];
          }
          void redis.floorRecord(...RECORD_KEYS, requestId, usage).catch(() => undefined);
          if (stream) {
            res.end();
            return;
          }
          const completion = JSON.parse(whole) as Record<string, unknown>;
          completion.model = body.model;
          res
            .writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' })
            .end(JSON.stringify(completion));
        });
      },
    );
    forward.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    forward.end(payload);
  };

  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      // The bench's readiness probe (GET /v1/models): relayed as the passthrough would.
      const probe = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, headers: req.headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      probe.on('error', () => res.writeHead(502).end());
      probe.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      relay(req, res, Buffer.concat(chunks)).catch(() => (res.headersSent ? res.destroy() : res.writeHead(500).end()));
    });
  });
  server.keepAliveTimeout = 65_000;
  return listen(server, port).then((address) => ({
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
        redis.disconnect();
      }),
  }));
}

function listen(server: Server, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
