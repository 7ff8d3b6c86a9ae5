import { createHash } from 'node:crypto';
import Redis, { Command } from 'ioredis';
import { bulk, EncodedScript, encodeCommand, ScriptArgument } from 'src/common/redis/encoded-script';
import { isCluster, RedisClient } from 'src/common/redis/redis-client';

/**
 * A Lua function's source: `library` runs once each time Redis loads the library (its locals are
 * the function's state between calls), `body` on every call, with `KEYS` and `ARGV` as a script has them.
 */
export interface FunctionSource {
  library: string;
  body: string;
}

/**
 * What a server answers to FCALL when this library is not loaded on it (a first call, a restart
 * without persistence, FUNCTION FLUSH), or when it has no functions (Redis 6: an unknown command)
 * or refuses them to this user (an ACL).
 */
const NOT_LOADED = /^(ERR Function not found|ERR unknown command|NOPERM)/;

/**
 * A request-path script run as a Redis function (FCALL) where the server has functions (Redis 7):
 * a function library keeps state between calls, which an EVAL script cannot (the admission reads
 * the server's run id once per load instead of on every call). Encoded in one pass, as
 * EncodedScript is, and answered through ioredis.
 * The library is named after a hash of its source, so two versions of the gateway (a rolling
 * deploy) each call their own. It is not loaded ahead: the first call that finds it missing loads
 * it (FUNCTION LOAD REPLACE, one load at a time per client) and is sent again, once; a server that
 * has no functions or refuses them to this user runs `script` from then on. So does a Redis Cluster
 * or a client with a key prefix, as for EncodedScript: there ioredis must read the keys.
 */
export class EncodedFunction {
  private readonly fcallHead: Buffer;
  private readonly library: string;
  /** Clients whose server has no functions for us: they run the script. */
  private readonly scriptOnly = new WeakSet<Redis>();
  /** Per client, the library's load under way. */
  private readonly loading = new WeakMap<Redis, Promise<boolean>>();

  private constructor(
    private readonly script: EncodedScript,
    name: string,
    source: FunctionSource,
  ) {
    const hash = createHash('sha1').update(source.library).update('\n').update(source.body).digest('hex');
    const versioned = `${name}_${hash.slice(0, 16)}`;
    this.library = [
      `#!lua name=${versioned}`,
      source.library,
      `redis.register_function('${versioned}', function(KEYS, ARGV)`,
      source.body,
      'end)',
    ].join('\n');
    this.fcallHead = Buffer.from(bulk('FCALL') + bulk(versioned));
  }

  /**
   * `source` as a function, and `lua` (the same work, as a self-contained script) defined on
   * `redis` as EncodedScript.define does, for the servers and clients that run the script.
   */
  static define(redis: RedisClient, name: string, lua: string, source: FunctionSource): EncodedFunction {
    return new EncodedFunction(EncodedScript.define(redis, name, lua), name, source);
  }

  /** Runs it with `args` (the number of keys, the keys, the other arguments); strings come back as strings. */
  run<T>(redis: RedisClient, args: ScriptArgument[]): Promise<T> {
    if (isCluster(redis) || redis.options.keyPrefix || this.scriptOnly.has(redis)) {
      return this.script.run<T>(redis, args);
    }
    return this.call<T>(redis, args).catch((error: Error) => this.afterFailure<T>(error, redis, args));
  }

  private call<T>(redis: Redis, args: ScriptArgument[]): Promise<T> {
    const command = new EncodedCallCommand(this.fcallHead, args);
    redis.sendCommand(command);
    return command.promise as Promise<T>;
  }

  private async afterFailure<T>(error: Error, redis: Redis, args: ScriptArgument[]): Promise<T> {
    if (!NOT_LOADED.test(error.message)) {
      throw error;
    }
    // Nothing ran: the call can be sent again, to the library or to the script.
    if (await this.load(redis)) {
      return this.call<T>(redis, args).catch((again: Error) => this.scriptInstead<T>(again, redis, args));
    }
    return this.scriptInstead<T>(error, redis, args);
  }

  /**
   * The script from now on for a client whose server refused the function: it has no functions, or
   * this user may load them but not call them (an ACL without `FCALL`), so that every call does not
   * load the library again. A library flushed again in between lands here too, and only costs speed.
   */
  private scriptInstead<T>(error: Error, redis: Redis, args: ScriptArgument[]): Promise<T> {
    if (!NOT_LOADED.test(error.message)) {
      throw error;
    }
    this.scriptOnly.add(redis);
    return this.script.run<T>(redis, args);
  }

  /**
   * Loads the library; false if the server refused it (no functions, or not for this user). A
   * connection lost meanwhile fails the call as any command does, and the next call tries again.
   */
  private load(redis: Redis): Promise<boolean> {
    let loading = this.loading.get(redis);
    if (!loading) {
      loading = redis
        .function('LOAD', 'REPLACE', this.library)
        .then(
          () => true,
          (error: Error) => {
            if (error.name === 'ReplyError') {
              return false;
            }
            throw error;
          },
        )
        .finally(() => this.loading.delete(redis));
      this.loading.set(redis, loading);
    }
    return loading;
  }
}

/** FCALL of the library's function, its arguments kept out of ioredis's view (see EncodedScript). */
class EncodedCallCommand extends Command {
  constructor(
    private readonly head: Buffer,
    private readonly callArgs: ScriptArgument[],
  ) {
    super('fcall', [], { replyEncoding: 'utf8' });
  }

  override toWritable(): Buffer {
    return encodeCommand(this.head, 2, this.callArgs);
  }
}
