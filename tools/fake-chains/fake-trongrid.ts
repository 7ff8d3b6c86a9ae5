import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tronAddressBytes } from 'src/values/address-derivation';

/** A TRC20 transfer the fake chain holds; `confirmed: false` is one not yet solidified. */
export interface FakeTronTransfer {
  txid: string;
  from: string;
  to: string;
  /** Integer string in the token's smallest unit. */
  value: string;
  token: { address: string; symbol: string; decimals: number; name: string };
  blockTimestamp: number;
  confirmed: boolean;
}

/**
 * - `throttle`: 429 (as TronGrid answers past a key's rate);
 * - `forbidden`: 403 (a key whose daily quota is spent);
 * - `garbage`: 200 with a body that is not TronGrid's JSON;
 * - `down`: the connection is cut without an answer;
 * - `cut`: the page is cut off in the middle of its JSON.
 * Each applies to the next `times` requests; `laterPagesOnly`: only to pages after an address's first.
 */
export type TronFault = 'throttle' | 'forbidden' | 'garbage' | 'down' | 'cut';

export interface FakeTronGrid {
  url: string;
  /** What the gateway reads TronGrid with. */
  env: Record<string, string>;
  transfers: FakeTronTransfer[];
  /** Every request's path and query, and its TRON-PRO-API-KEY header. */
  requests: { path: string; query: URLSearchParams; apiKey: string | undefined }[];
  /** A new 64-hex transaction id. */
  txid(): string;
  fail(fault: TronFault, times?: number, laterPagesOnly?: boolean): void;
  /** Entries per page at most, whatever `limit` asks (to make paging happen with few transfers). */
  pageSize: number;
  /** Each next page repeats the previous page's last entry (as TronGrid does when a block straddles pages). */
  overlapPages: boolean;
  /** List every token's transfers, as if the contract_address filter were ignored. */
  ignoreContractFilter: boolean;
  /** Addresses whose listing answers 500 (TronGrid's answer when its backend fails). */
  failingAddresses: Set<string>;
  /** Transactions whose events are not served yet (an empty list, as for a transaction TronGrid has not indexed). */
  unindexed: Set<string>;
  close(): Promise<void>;
}

export const FAKE_TRONGRID_KEY = 'fake-trongrid-key';

/**
 * Our fake TronGrid over real HTTP, with TronGrid's answer (`{ data, success, meta: { at, page_size,
 * fingerprint? } }`):
 * - `GET /v1/accounts/{address}/transactions/trc20`, with TronGrid's query (only_confirmed, only_to,
 *   contract_address, min_timestamp, limit, fingerprint), oldest first;
 * - `GET /v1/transactions/{txid}/events` (only_confirmed, limit, fingerprint): each transfer of the
 *   transaction as a `Transfer` event, `event_index` its place among the transaction's transfers (as
 *   they were pushed, each token's included), its arguments' addresses in hex as TronGrid decodes them.
 */
export async function startFakeTronGrid(contract: string): Promise<FakeTronGrid> {
  const faults: { fault: TronFault; times: number; laterPagesOnly: boolean }[] = [];
  const fake: FakeTronGrid = {
    url: '',
    env: {},
    transfers: [],
    requests: [],
    txid: () => randomBytes(32).toString('hex'),
    fail: (fault, times = 1, laterPagesOnly = false) => faults.push({ fault, times, laterPagesOnly }),
    pageSize: 200,
    overlapPages: false,
    ignoreContractFilter: false,
    failingAddresses: new Set(),
    unindexed: new Set(),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // The gateway's client keeps its connections alive; close would wait for them.
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    fake.requests.push({ path: url.pathname, query: url.searchParams, apiKey: header(request, 'tron-pro-api-key') });
    const pending = faults[0];
    if (pending && (!pending.laterPagesOnly || url.searchParams.has('fingerprint'))) {
      if (--pending.times <= 0) {
        faults.shift();
      }
      return misbehave(pending.fault, response);
    }
    answer(fake, contract, url, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.env = { TRONGRID_URL: fake.url, TRONGRID_API_KEY: FAKE_TRONGRID_KEY, TRC20_USDT_CONTRACT: contract };
  return fake;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function misbehave(fault: TronFault, response: ServerResponse): void {
  switch (fault) {
    case 'throttle':
      return void response.writeHead(429, { 'content-type': 'application/json' }).end('{"Error":"too many requests"}');
    case 'forbidden':
      return void response.writeHead(403, { 'content-type': 'application/json' }).end('{"Error":"quota exceeded"}');
    case 'garbage':
      return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
    case 'down':
      return void response.socket?.destroy();
    case 'cut':
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"data":[{"transaction_id":"');
      return void response.socket?.destroy();
  }
}

function answer(fake: FakeTronGrid, contract: string, url: URL, response: ServerResponse): void {
  const events = /^\/v1\/transactions\/([0-9a-f]{64})\/events$/.exec(url.pathname);
  if (events) {
    return answerEvents(fake, events[1], url, response);
  }
  const match = /^\/v1\/accounts\/([^/]+)\/transactions\/trc20$/.exec(url.pathname);
  if (!match) {
    return void response.writeHead(404).end();
  }
  if (fake.failingAddresses.has(match[1])) {
    return void response.writeHead(500, { 'content-type': 'application/json' }).end('{"Error":"internal error"}');
  }
  const query = url.searchParams;
  const minTimestamp = Number(query.get('min_timestamp') ?? 0);
  const wanted = query.get('contract_address');
  const listed = fake.transfers
    .filter((t) => t.to === match[1] || (query.get('only_to') !== 'true' && t.from === match[1]))
    .filter((t) => query.get('only_confirmed') !== 'true' || t.confirmed)
    .filter((t) => fake.ignoreContractFilter || !wanted || t.token.address === wanted)
    .filter((t) => t.blockTimestamp >= minTimestamp)
    .sort((a, b) => a.blockTimestamp - b.blockTimestamp);
  const start = Number(Buffer.from(query.get('fingerprint') ?? '', 'base64url').toString() || 0);
  const size = Math.min(Number(query.get('limit') ?? 20), fake.pageSize);
  const page = listed.slice(start, start + size);
  const end = start + page.length;
  const next = end < listed.length ? (fake.overlapPages ? end - 1 : end) : null;
  const body = {
    data: page.map((t) => ({
      transaction_id: t.txid,
      token_info: t.token,
      block_timestamp: t.blockTimestamp,
      from: t.from,
      to: t.to,
      type: 'Transfer',
      value: t.value,
    })),
    success: true,
    meta: {
      at: Date.now(),
      page_size: page.length,
      ...(next !== null && {
        fingerprint: Buffer.from(String(next)).toString('base64url'),
        links: { next: `${fake.url}${url.pathname}?fingerprint=${next}` },
      }),
    },
  };
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function answerEvents(fake: FakeTronGrid, txid: string, url: URL, response: ServerResponse): void {
  const query = url.searchParams;
  const all = fake.unindexed.has(txid) ? [] : fake.transfers.filter((t) => t.txid === txid);
  const listed = all
    .map((t, eventIndex) => ({ t, eventIndex }))
    .filter(({ t }) => query.get('only_confirmed') !== 'true' || t.confirmed);
  const start = Number(Buffer.from(query.get('fingerprint') ?? '', 'base64url').toString() || 0);
  const size = Math.min(Number(query.get('limit') ?? 20), fake.pageSize);
  const page = listed.slice(start, start + size);
  const next = start + page.length < listed.length ? start + page.length : null;
  const body = {
    data: page.map(({ t, eventIndex }) => ({
      block_number: Math.floor(t.blockTimestamp / 3_000),
      block_timestamp: t.blockTimestamp,
      caller_contract_address: t.token.address,
      contract_address: t.token.address,
      event_index: eventIndex,
      event_name: 'Transfer',
      result: { '0': hex(t.from), '1': hex(t.to), '2': t.value, from: hex(t.from), to: hex(t.to), value: t.value },
      result_type: { from: 'address', to: 'address', value: 'uint256' },
      event: 'Transfer(address indexed from, address indexed to, uint256 value)',
      transaction_id: t.txid,
    })),
    success: true,
    meta: {
      at: Date.now(),
      page_size: page.length,
      ...(next !== null && { fingerprint: Buffer.from(String(next)).toString('base64url') }),
    },
  };
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** An event argument's address as TronGrid decodes it: `0x` and the 20 bytes after TRON's 0x41. */
function hex(address: string): string {
  const bytes = tronAddressBytes(address);
  return bytes ? `0x${Buffer.from(bytes.subarray(1)).toString('hex')}` : address;
}
