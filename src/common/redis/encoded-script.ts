import { createHash } from 'node:crypto';
import Redis, { Command } from 'ioredis';
import { isCluster, RedisClient } from 'src/common/redis/redis-client';
import { runScript } from 'src/common/redis/run-script';

/** An argument of a script or function call: a key, or a value as text or a number. */
export type ScriptArgument = string | number;

const CRLF = '\r\n';

/**
 * A Lua script that runs on every completion (the admission, the usage record), written to Redis as
 * one buffer built in one pass. ioredis sends a script by building its RESP text with string
 * concatenation, through a command class that wraps its own `reject` and a second promise per call:
 * a seventh of what a request allocated (docs/performance.md, "Admission: one script, then a Redis
 * function"). The reply still comes back through ioredis (its queue, its parser, its reconnections).
 * As ioredis does, the first use on each connection sends the script itself (EVAL) and later ones
 * its hash (EVALSHA), so a Redis that restarted empty never answers NOSCRIPT to a command that
 * had to leave in the same write as others (one-write.ts). Should the scripts be flushed under a
 * live connection, the NOSCRIPT reply sends the script's text again, once.
 * Registered with `defineCommand` under `name` as well, which a Redis Cluster or a client with a key
 * prefix runs instead: there ioredis must read the command's keys to route or prefix them.
 */
export class EncodedScript {
  private readonly evalHead: Buffer;
  private readonly evalshaHead: Buffer;
  /** Connections that have been sent this script's text. */
  private readonly loadedOn = new WeakSet<object>();

  constructor(
    private readonly name: string,
    lua: string,
  ) {
    const sha = createHash('sha1').update(lua).digest('hex');
    this.evalHead = Buffer.from(bulk('EVAL') + bulk(lua));
    this.evalshaHead = Buffer.from(bulk('EVALSHA') + bulk(sha));
  }

  /** The script, defined on `redis` too (for a cluster or a client with a key prefix). */
  static define(redis: RedisClient, name: string, lua: string): EncodedScript {
    redis.defineCommand(name, { lua });
    return new EncodedScript(name, lua);
  }

  /**
   * Runs the script with `args`: the number of keys, the keys, then the other arguments, as EVAL
   * takes them. Written (or corked, one-write.ts) before this returns; strings come back as strings.
   */
  run<T>(redis: RedisClient, args: ScriptArgument[]): Promise<T> {
    if (isCluster(redis) || redis.options.keyPrefix) {
      return runScript<T>(redis, this.name, ...args);
    }
    return this.send<T>(redis, args).catch((error: Error) => this.afterFailure<T>(error, redis, args));
  }

  /** RESP for one call on `connection`: the script's text on a connection's first use, its hash after. */
  encode(connection: object, args: ScriptArgument[]): Buffer {
    let head = this.evalshaHead;
    if (!this.loadedOn.has(connection)) {
      this.loadedOn.add(connection);
      head = this.evalHead;
    }
    return encodeCommand(head, 2, args);
  }

  private send<T>(redis: Redis, args: ScriptArgument[]): Promise<T> {
    const command = new EncodedScriptCommand(this, args);
    redis.sendCommand(command);
    return command.promise as Promise<T>;
  }

  private afterFailure<T>(error: Error, redis: Redis, args: ScriptArgument[]): Promise<T> {
    if (!error.message.startsWith('NOSCRIPT')) {
      throw error;
    }
    // The script left Redis's cache under this connection: sent again, as text this time. Once.
    this.loadedOn.delete(redis.stream);
    return this.send<T>(redis, args);
  }
}

/** An ioredis command whose bytes are the script's own encoding, for the connection that sends it. */
class EncodedScriptCommand extends Command {
  constructor(
    private readonly script: EncodedScript,
    private readonly scriptArgs: ScriptArgument[],
  ) {
    // The arguments stay out of ioredis's view: nothing of a request (a usage payload) is copied
    // into an error's `command.args`. Replies decode as UTF-8, as for a defined command.
    super('evalsha', [], { replyEncoding: 'utf8' });
  }

  override toWritable(connection: object): Buffer {
    return this.script.encode(connection, this.scriptArgs);
  }
}

/** `text` as a RESP bulk string. */
export function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}${CRLF}${text}${CRLF}`;
}

const STAR = 0x2a;
const DOLLAR = 0x24;
const CR = 0x0d;
const LF = 0x0a;

/** Each argument's byte length, between sizing and filling: encoding is synchronous, one array serves all. */
const argumentLengths: number[] = [];

/**
 * `*<count>` and `head` (already bulk strings: the command and its first `headCount` arguments),
 * then each argument as a bulk string, in one buffer sized before it is filled. The counts and
 * lengths are written as digits straight into it: no text is built around the arguments.
 */
export function encodeCommand(head: Buffer, headCount: number, args: ScriptArgument[]): Buffer {
  const count = headCount + args.length;
  let size = decimalWidth(count) + 3 + head.length;
  for (let i = 0; i < args.length; i++) {
    const length = Buffer.byteLength(String(args[i]));
    argumentLengths[i] = length;
    size += decimalWidth(length) + length + 5;
  }
  const out = Buffer.allocUnsafe(size);
  let at = writeLine(out, 0, STAR, count);
  at += head.copy(out, at);
  for (let i = 0; i < args.length; i++) {
    at = writeLine(out, at, DOLLAR, argumentLengths[i]);
    at += out.write(String(args[i]), at, 'utf8');
    out[at++] = CR;
    out[at++] = LF;
  }
  return out;
}

/** `<marker><value>\r\n` at `at`; returns where it ends. */
function writeLine(out: Buffer, at: number, marker: number, value: number): number {
  out[at] = marker;
  const end = at + 1 + decimalWidth(value);
  for (let digit = end - 1, rest = value; digit > at; digit--, rest = Math.floor(rest / 10)) {
    out[digit] = 0x30 + (rest % 10);
  }
  out[end] = CR;
  out[end + 1] = LF;
  return end + 2;
}

function decimalWidth(value: number): number {
  let width = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) {
    width++;
  }
  return width;
}
