import { Erc20Config } from 'src/config/chain-config';
import { ChainUnavailable } from 'src/modules/payments/chain/trongrid-client';
import {
  BlockNotFoundError,
  createPublicClient,
  http,
  parseAbiItem,
  parseEventLogs,
  PublicClient,
  TransactionReceiptNotFoundError,
} from 'viem';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** Recipients per eth_getLogs call: the topic list of one filter stays small enough for any provider. */
const ADDRESSES_PER_CALL = 500;

/** A USDT transfer to one of our addresses, as its log says. */
export interface TransferLog {
  txid: string;
  eventIndex: number;
  to: string;
  amount: bigint;
  blockNumber: bigint;
  blockHash: string;
}

/** The token's Transfer logs over JSON-RPC; any failure of the endpoint is ChainUnavailable. */
export class Erc20Logs {
  private readonly client: PublicClient;

  constructor(private readonly config: Erc20Config) {
    this.client = createPublicClient({ transport: http(config.rpcUrl, { timeout: 10_000, retryCount: 1 }) });
  }

  head(): Promise<bigint> {
    return this.call(() => this.client.getBlockNumber({ cacheTime: 0 }));
  }

  async finalized(): Promise<bigint> {
    return (await this.call(() => this.client.getBlock({ blockTag: 'finalized' }))).number;
  }

  /** Transfer(_, to ∈ addresses, _) logs of the token in [from, to]; a removed log means a reorg under way. */
  async transfersTo(addresses: string[], fromBlock: bigint, toBlock: bigint): Promise<TransferLog[]> {
    const logs: TransferLog[] = [];
    for (let start = 0; start < addresses.length; start += ADDRESSES_PER_CALL) {
      const recipients = addresses.slice(start, start + ADDRESSES_PER_CALL) as `0x${string}`[];
      const found = await this.call(() =>
        this.client.getLogs({
          address: this.config.contract,
          event: TRANSFER,
          args: { to: recipients },
          fromBlock,
          toBlock,
          strict: true,
        }),
      );
      for (const log of found) {
        if (log.removed || log.blockHash === null || log.transactionHash === null || log.logIndex === null) {
          throw new ChainUnavailable('the endpoint returned a removed or pending log: the chain is reorganizing');
        }
        logs.push({
          txid: log.transactionHash,
          eventIndex: log.logIndex,
          to: log.args.to,
          amount: log.args.value,
          blockNumber: log.blockNumber,
          blockHash: log.blockHash,
        });
      }
    }
    return logs.sort((a, b) =>
      a.blockNumber === b.blockNumber ? a.eventIndex - b.eventIndex : a.blockNumber < b.blockNumber ? -1 : 1,
    );
  }

  /** Each log's block is still the canonical block at its height; if not, nothing of the range is credited. */
  async checkCanonical(logs: TransferLog[]): Promise<void> {
    const heights = [...new Set(logs.map((log) => log.blockNumber))];
    for (const height of heights) {
      const block = await this.call(() => this.client.getBlock({ blockNumber: height }));
      if (logs.some((log) => log.blockNumber === height && log.blockHash !== block.hash)) {
        throw new ChainUnavailable(`block ${height} changed since its logs were read: the chain is reorganizing`);
      }
    }
  }

  /** The canonical block's hash at each height; a height past the head is left out. */
  async hashesAt(heights: bigint[]): Promise<Map<bigint, string>> {
    const hashes = new Map<bigint, string>();
    for (const height of heights) {
      const block = await this.call(() => this.client.getBlock({ blockNumber: height }).catch(notFound));
      if (block?.hash) {
        hashes.set(height, block.hash);
      }
    }
    return hashes;
  }

  /**
   * Where the transaction's USDT transfer of `amount` to `to` is on the canonical chain now, or null
   * when the chain has no such transfer (the transaction is unknown, failed, or moved nothing to us).
   */
  async transferNow(
    txid: string,
    to: string,
    amount: bigint,
  ): Promise<{ blockNumber: bigint; blockHash: string } | null> {
    const receipt = await this.call(() =>
      this.client.getTransactionReceipt({ hash: txid as `0x${string}` }).catch(notFound),
    );
    if (!receipt || receipt.status !== 'success') {
      return null;
    }
    const found = parseEventLogs({ abi: [TRANSFER], logs: receipt.logs, eventName: 'Transfer', strict: true }).some(
      (log) =>
        log.address.toLowerCase() === this.config.contract.toLowerCase() &&
        log.args.to.toLowerCase() === to.toLowerCase() &&
        log.args.value === amount,
    );
    return found ? { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash } : null;
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new ChainUnavailable(`the JSON-RPC endpoint failed: ${(error as Error).message.split('\n')[0]}`);
    }
  }
}

/** An answer of "no such block / receipt" is an answer, not a failure of the endpoint. */
function notFound(error: unknown): null {
  if (error instanceof BlockNotFoundError || error instanceof TransactionReceiptNotFoundError) {
    return null;
  }
  throw error;
}
