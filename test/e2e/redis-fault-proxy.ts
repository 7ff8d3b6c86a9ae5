import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect, createServer, Server, Socket } from 'node:net';
import { RECORD_SCRIPT } from 'src/modules/billing/usage-queue.scripts';

/** What the proxy does to the commands a rule matches. */
export interface CommandRule {
  matches(args: Buffer[]): boolean;
  /** Redis runs an erroring script in the command's place: the client gets an error reply; the command is kept in `refused`. */
  refuse?: boolean;
  /** The replies Redis sends on that connection within this many ms after the command reach the client only then, in order. */
  delayRepliesMs?: number;
  /** Called as the command passes (after it was sent on). */
  onSeen?(): void;
}

const RECORD_SHA = createHash('sha1').update(RECORD_SCRIPT).digest('hex');

/** The usage record (billing's RECORD_SCRIPT), as ioredis sends it: EVAL the first time on a connection, EVALSHA after. */
export function isUsageRecord(args: Buffer[]): boolean {
  const name = args[0]?.toString().toLowerCase();
  const script = args[1]?.toString();
  return (name === 'eval' && script === RECORD_SCRIPT) || (name === 'evalsha' && script === RECORD_SHA);
}

/** The arguments of a refused record, to run it later as it was sent (EVAL, whatever the connection had loaded). */
export function recordAsEval(args: Buffer[]): string[] {
  return ['EVAL', RECORD_SCRIPT, ...args.slice(2).map((arg) => arg.toString())];
}

const REFUSAL = encode(
  ['EVAL', "return redis.error_reply('ERR refused by the test proxy')", '0'].map((a) => Buffer.from(a)),
);

/**
 * A TCP proxy of the test's own in front of a Redis, which reads the commands clients send (RESP
 * arrays of bulk strings: how ioredis writes every command) so that a test can act on one: answer
 * it with an error instead of running it, hold back the replies that follow it, or act the moment
 * it passes. Everything else passes unchanged.
 */
export class RedisFaultProxy {
  rule: CommandRule | null = null;
  /** Commands the rule refused, in order. */
  readonly refused: Buffer[][] = [];
  /** When held-back replies were passed on (Date.now()), in order. */
  readonly releasedAt: number[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<RedisFaultProxy> {
    let proxy: RedisFaultProxy | null = null;
    const server = createServer((client) => proxy?.bridge(client, targetPort));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    proxy = new RedisFaultProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private bridge(client: Socket, targetPort: number): void {
    const redis = connect(targetPort, '127.0.0.1');
    for (const socket of [client, redis]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        redis.destroy();
      });
    }
    client.on('close', () => redis.destroy());
    redis.on('close', () => client.destroy());
    const replies = new HeldReplies(client, (at) => this.releasedAt.push(at));
    redis.on('data', (chunk: Buffer) => replies.push(chunk));
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      const parsed = parseCommands(Buffer.concat([pending, chunk]));
      pending = parsed.rest;
      for (const command of parsed.commands) {
        this.pass(command, redis, replies);
      }
    });
  }

  private pass(command: Command, redis: Socket, replies: HeldReplies): void {
    const rule = this.rule?.matches(command.args) ? this.rule : null;
    if (rule?.refuse) {
      this.refused.push(command.args);
    }
    redis.write(rule?.refuse ? REFUSAL : command.raw);
    if (rule?.delayRepliesMs) {
      replies.holdFor(rule.delayRepliesMs);
    }
    rule?.onSeen?.();
  }
}

/** Replies from Redis to one client, passed on at once unless held back. */
class HeldReplies {
  private held: Buffer[] = [];
  private holding = false;

  constructor(
    private readonly client: Socket,
    private readonly onRelease: (at: number) => void,
  ) {}

  holdFor(ms: number): void {
    if (this.holding) {
      return;
    }
    this.holding = true;
    setTimeout(() => {
      this.holding = false;
      const held = this.held;
      this.held = [];
      held.forEach((chunk) => this.client.write(chunk));
      this.onRelease(Date.now());
    }, ms);
  }

  push(chunk: Buffer): void {
    if (this.holding) {
      this.held.push(chunk);
    } else {
      this.client.write(chunk);
    }
  }
}

interface Command {
  raw: Buffer;
  args: Buffer[];
}

/** The complete commands at the start of `buffer`, and what is left of an incomplete one. */
function parseCommands(buffer: Buffer): { commands: Command[]; rest: Buffer } {
  const commands: Command[] = [];
  let offset = 0;
  for (;;) {
    const command = parseCommand(buffer, offset);
    if (!command) {
      return { commands, rest: buffer.subarray(offset) };
    }
    commands.push({ raw: buffer.subarray(offset, command.end), args: command.args });
    offset = command.end;
  }
}

function parseCommand(buffer: Buffer, start: number): { args: Buffer[]; end: number } | null {
  const header = readLine(buffer, start);
  if (!header) {
    return null;
  }
  if (!header.line.startsWith('*')) {
    throw new Error(`not a RESP array: ${header.line.slice(0, 20)}`);
  }
  const args: Buffer[] = [];
  let offset = header.next;
  for (let count = Number(header.line.slice(1)); args.length < count;) {
    const length = readLine(buffer, offset);
    if (!length) {
      return null;
    }
    const size = Number(length.line.slice(1));
    if (buffer.length < length.next + size + 2) {
      return null;
    }
    args.push(buffer.subarray(length.next, length.next + size));
    offset = length.next + size + 2;
  }
  return { args, end: offset };
}

function readLine(buffer: Buffer, start: number): { line: string; next: number } | null {
  const end = buffer.indexOf('\r\n', start);
  return end < 0 ? null : { line: buffer.subarray(start, end).toString(), next: end + 2 };
}

function encode(args: Buffer[]): Buffer {
  return Buffer.concat([
    Buffer.from(`*${args.length}\r\n`),
    ...args.flatMap((arg) => [Buffer.from(`$${arg.length}\r\n`), arg, Buffer.from('\r\n')]),
  ]);
}
