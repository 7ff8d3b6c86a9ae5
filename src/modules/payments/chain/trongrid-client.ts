import { tronAddressBytes, tronAddressOf } from 'src/values/address-derivation';
import { TronConfig } from 'src/config/chain-config';
import { callProvider } from 'src/modules/payments/providers/provider-http';

/** The chain's API could not be read (down, throttled past our patience, or an answer not in its protocol). */
export class ChainUnavailable extends Error {}

/** The run's share of TronGrid calls is spent: not the chain's fault, the run just stops here. */
export class BudgetSpent extends Error {
  constructor() {
    super('the TronGrid call budget is spent');
  }
}

/** Asked before every call (each retry included): false once the run may make no more. */
export interface CallBudget {
  take(): Promise<boolean>;
}

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

/** One event of a transaction as TronGrid's events list names it: the index is the chain's own. */
export interface TronEvent {
  txid: string;
  eventIndex: number;
  name: string;
  /** base58 */
  contract: string;
  /** base58; null when the event has no `to` (not a transfer). */
  to: string | null;
  /** Null when the event has no integer `value`. */
  value: bigint | null;
  blockNumber: bigint | null;
}

export interface TronPage {
  transfers: TronTransfer[];
  /** Where the next page starts; null on the last. */
  fingerprint: string | null;
}

const PAGE_SIZE = 200;
/** A transaction with more events than this (TRON's energy limit allows far fewer transfers) is refused. */
const EVENT_PAGES = 10;
/** Throttled answers (429, and 403 once a key's quota is spent) are retried this often, waiting longer each time. */
const THROTTLE_RETRIES = 3;
const BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** TronGrid's v1 TRC20 history of an account: confirmed incoming transfers of one token, oldest first. */
export class TronGridClient {
  constructor(
    private readonly config: TronConfig,
    private readonly budget: CallBudget,
  ) {}

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

  /** Every confirmed event of the transaction, in every page: what gives each transfer its identity. */
  async events(txid: string): Promise<TronEvent[]> {
    const events: TronEvent[] = [];
    let fingerprint: string | null = null;
    for (let page = 0; page < EVENT_PAGES; page++) {
      const query = new URLSearchParams({ only_confirmed: 'true', limit: String(PAGE_SIZE) });
      if (fingerprint) {
        query.set('fingerprint', fingerprint);
      }
      const url = `${this.config.url}/v1/transactions/${encodeURIComponent(txid)}/events?${query.toString()}`;
      const answer = parseEventsPage(await this.get(url));
      events.push(...answer.events);
      fingerprint = answer.fingerprint;
      if (fingerprint === null) {
        return events;
      }
    }
    throw new ChainUnavailable(`TronGrid lists more than ${EVENT_PAGES * PAGE_SIZE} events for ${txid}`);
  }

  private async get(url: string): Promise<string> {
    const headers = this.config.apiKey ? { 'TRON-PRO-API-KEY': this.config.apiKey } : undefined;
    for (let attempt = 0; ; attempt++) {
      if (!(await this.budget.take())) {
        throw new BudgetSpent();
      }
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

/** TronGrid's envelope, `{ success, data, meta: { fingerprint? } }`; anything else is refused whole. */
function envelopeOf(text: string): { data: unknown[]; fingerprint: string | null } {
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
  return { data: body.data, fingerprint: typeof fingerprint === 'string' && fingerprint !== '' ? fingerprint : null };
}

/** A page as TronGrid documents it; anything else is refused whole, so no part of it is processed. */
export function parsePage(text: string): TronPage {
  const { data, fingerprint } = envelopeOf(text);
  return { transfers: data.map(transferOf), fingerprint };
}

export function parseEventsPage(text: string): { events: TronEvent[]; fingerprint: string | null } {
  const { data, fingerprint } = envelopeOf(text);
  return { events: data.map(eventOf), fingerprint };
}

function eventOf(item: unknown): TronEvent {
  const entry = item as Record<string, unknown>;
  const result = (entry?.result ?? {}) as Record<string, unknown>;
  if (
    typeof entry?.transaction_id !== 'string' ||
    !Number.isSafeInteger(entry.event_index) ||
    typeof entry.event_name !== 'string' ||
    typeof entry.contract_address !== 'string'
  ) {
    throw new ChainUnavailable('TronGrid listed an event without its fields');
  }
  const value = result.value;
  return {
    txid: entry.transaction_id,
    eventIndex: entry.event_index as number,
    name: entry.event_name,
    contract: base58Of(entry.contract_address) ?? entry.contract_address,
    to: typeof result.to === 'string' ? base58Of(result.to) : null,
    value: typeof value === 'string' && /^\d{1,78}$/.test(value) ? BigInt(value) : null,
    blockNumber: Number.isSafeInteger(entry.block_number) ? BigInt(entry.block_number as number) : null,
  };
}

/**
 * An event's address as base58: TronGrid gives a contract's in base58 and decoded arguments in hex,
 * `0x` and the 20 bytes as the EVM sees them (or `41` and them); null when it is none of these.
 */
export function base58Of(address: string): string | null {
  const hex = /^(?:0x|41)([0-9a-fA-F]{40})$/.exec(address)?.[1];
  if (hex) {
    return tronAddressOf(Uint8Array.from(Buffer.from(`41${hex}`, 'hex')));
  }
  return tronAddressBytes(address) ? address : null;
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
