import { AppConfig } from 'src/config/app-config';

/** A channel's timeouts in ms, each the channel's own or the process default. */
export interface ChannelTimeouts {
  /** Connecting (TCP and TLS). */
  connectMs: number;
  /** From sending a non-streamed request to the response's first byte (its headers). */
  firstByteMs: number;
  /** The same for a streamed request: streams start fast, so a stuck one is given up sooner. */
  streamFirstByteMs: number;
  /** The longest silence between two chunks of an answer, also before the first chunk after the headers. */
  silenceMs: number;
}

export interface StoredTimeouts {
  connectTimeoutMs: number | null;
  firstByteTimeoutMs: number | null;
  streamFirstByteTimeoutMs: number | null;
  silenceTimeoutMs: number | null;
}

export function effectiveTimeouts(stored: StoredTimeouts, defaults: AppConfig['upstream']): ChannelTimeouts {
  return {
    connectMs: stored.connectTimeoutMs ?? defaults.connectTimeoutMs,
    firstByteMs: stored.firstByteTimeoutMs ?? defaults.headersTimeoutMs,
    streamFirstByteMs: stored.streamFirstByteTimeoutMs ?? defaults.streamHeadersTimeoutMs,
    silenceMs: stored.silenceTimeoutMs ?? defaults.bodyTimeoutMs,
  };
}
