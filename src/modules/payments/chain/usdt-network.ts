/** USDT's chains, as orders, addresses and deposits name them. */
export const USDT_NETWORKS = ['TRC20', 'ERC20'] as const;
export type UsdtNetwork = (typeof USDT_NETWORKS)[number];

/** A confirmed transfer of USDT to one of our addresses, as a watcher read it from its chain. */
export interface ChainTransfer {
  network: UsdtNetwork;
  txid: string;
  /** The log's index in its block (ERC20), or the event's index in its transaction, as TronGrid's events name it (TRC20). */
  eventIndex: number;
  /** Our deposit address, as stored. */
  address: string;
  /** USDT micros (6 decimals). */
  amount: bigint;
  blockNumber: bigint | null;
  /** ERC20: the hash of its block, to notice a reorg after it is recorded. */
  blockHash?: string | null;
}
