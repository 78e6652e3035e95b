/** A price quote as stored and matched to orders (reference orderbook.md §7). Amounts in token atoms. */
export interface StoredQuote {
  /** null for `fast` quotes, which are not stored */
  id: number | null;
  sellAmount: bigint;
  buyAmount: bigint;
  feeAmount: bigint;
  gasAmount: bigint;
  gasPrice: bigint;
  /** native-token atoms per sell-token atom */
  sellTokenPrice: number;
  solver: string;
  verified: boolean;
}
