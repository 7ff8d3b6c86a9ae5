/** One repeatable job per USDT network, run by whichever worker takes it (one lease per network). */
export enum ChainWatchJob {
  Trc20 = 'watch-trc20',
  Erc20 = 'watch-erc20',
}
