/** The shared ioredis client for commands (rate limits, caches, queues' producers). */
export const REDIS = Symbol('REDIS');
