import { TronConfig } from 'src/config/chain-config';
import { callProvider } from 'src/modules/payments/providers/provider-http';

/** The chain's API could not be read (down, throttled past our patience, or an answer not in its protocol). */
export class ChainUnavailable extends Error {}

/** One TRC20 transfer as TronGrid lists it: only the fields we check. */
export interface TronTransfer {
  txid: string;
  from: string;
  to: string;
  value: bigint;
  tokenAddress: string;
  decimals: number;
  type: string;
  blockTimestamp: number;
}

export interface TronPage {
  transfers: TronTransfer[];
  /** Where the next page starts; null on the last. */
  fingerprint: string | null;
}

const PAGE_SIZE = 200;
/** Throttled answers (429, and 403 once a key's quota is spent) are retried this often, waiting longer each time. */
const THROTTLE_RETRIES = 3;
const BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** TronGrid's v1 TRC20 history of an account: confirmed incoming transfers of one token, oldest first. */
export class TronGridClient {
  constructor(private readonly config: TronConfig) {}

  async page(address: string, minTimestamp: bigint, fingerprint: string | null): Promise<TronPage> {
    const query = new URLSearchParams({
      only_confirmed: 'true',
      only_to: 'true',
      contract_address: this.config.contract,
      min_timestamp: minTimestamp.toString(),
      order_by: 'block_timestamp,asc',
      limit: String(PAGE_SIZE),
    });
    if (fingerprint) {
      query.set('fingerprint', fingerprint);
    }
    const url = `${this.config.url}/v1/accounts/${address}/transactions/trc20?${query.toString()}`;
    return parsePage(await this.get(url));
  }

  private async get(url: string): Promise<string> {
    const headers = this.config.apiKey ? { 'TRON-PRO-API-KEY': this.config.apiKey } : undefined;
    for (let attempt = 0; ; attempt++) {
      const answer = await callProvider(url, { method: 'GET', headers }, { maxBytes: 4 * 1024 * 1024 }).catch(
        (error: Error) => {
          throw new ChainUnavailable(`TronGrid did not answer: ${error.message}`);
        },
      );
      if (answer.status === 200) {
        return answer.text;
      }
      if ((answer.status !== 429 && answer.status !== 403) || attempt >= THROTTLE_RETRIES) {
        throw new ChainUnavailable(`TronGrid answered ${answer.status}`);
      }
      const retryAfter = Number(answer.headers['retry-after']);
      const wait = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : BACKOFF_MS * 2 ** attempt;
      await sleep(Math.min(wait, MAX_BACKOFF_MS));
    }
  }
}

/** A page as TronGrid documents it; anything else is refused whole, so no part of it is processed. */
export function parsePage(text: string): TronPage {
  let body: { success?: unknown; data?: unknown; meta?: { fingerprint?: unknown } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new ChainUnavailable('TronGrid answered something that is not JSON');
  }
  if (body?.success !== true || !Array.isArray(body.data)) {
    throw new ChainUnavailable('TronGrid answered without success and data');
  }
  const fingerprint = body.meta?.fingerprint;
  return {
    transfers: body.data.map(transferOf),
    fingerprint: typeof fingerprint === 'string' && fingerprint !== '' ? fingerprint : null,
  };
}

function transferOf(item: unknown): TronTransfer {
  const entry = item as Record<string, unknown>;
  const token = entry?.token_info as Record<string, unknown> | undefined;
  const value = entry?.value;
  if (
    typeof entry?.transaction_id !== 'string' ||
    typeof entry.to !== 'string' ||
    typeof entry.from !== 'string' ||
    typeof value !== 'string' ||
    !/^\d{1,30}$/.test(value) ||
    typeof entry.block_timestamp !== 'number' ||
    typeof token?.address !== 'string'
  ) {
    throw new ChainUnavailable('TronGrid listed a transfer without its fields');
  }
  return {
    txid: entry.transaction_id,
    from: entry.from,
    to: entry.to,
    value: BigInt(value),
    tokenAddress: token.address,
    decimals: Number(token.decimals),
    type: typeof entry.type === 'string' ? entry.type : '',
    blockTimestamp: entry.block_timestamp,
  };
}
