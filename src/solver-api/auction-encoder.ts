/**
 * The driver side's encoding of an auction into the Solver Engine API's `Auction`, done once per auction for
 * every engine (the result is remembered per auction object): orders (`orders.ts`), tokens with decimals,
 * symbol, reference price (native-token wei for 1e18 atoms, our auction prices as they are) and the
 * settlement's balance, the Uniswap-V2 pools as `constantProduct` liquidity, the gas price, and the deadline
 * by which engines must answer (the time limit, counted once the chain has been read).
 */
import type { Address } from 'viem';
import type { Auction } from '../solver/auction-types.js';
import type { ChainReader } from '../chain/reader.js';
import { BUY_ETH_ADDRESS } from '../protocol/index.js';
import { encodeAuction } from './codec.js';
import { ConstantProductLiquidity, routablePairs, type PoolNetwork } from './liquidity.js';
import { toSolverOrders } from './orders.js';
import type { SolverAuction, SolverConstantProductPool, WireAuction } from './schemas.js';

export interface EncoderNetwork extends PoolNetwork {
  reader: Pick<ChainReader, 'tokensMetadata' | 'erc20Balances' | 'gasPrice'>;
  settlement: Address;
}

export interface EncodedAuction {
  /** the decoded form (bigint amounts) */
  auction: SolverAuction;
  /** the JSON value every engine receives */
  wire: WireAuction;
  /** its JSON text, serialized once */
  body: string;
  /** liquidity by id, for checking and encoding `liquidity` interactions */
  liquidity: Map<string, SolverConstantProductPool>;
  deadline: Date;
}

export class AuctionEncoder {
  private readonly cache = new WeakMap<Auction, Promise<EncodedAuction>>();
  private readonly pools: ConstantProductLiquidity;

  constructor(
    private readonly network: EncoderNetwork,
    /** how long engines have to answer, ms */
    readonly timeLimitMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.pools = new ConstantProductLiquidity(network);
  }

  /** The encoded auction; concurrent and later calls for the same auction object share one encoding. */
  encode(auction: Auction): Promise<EncodedAuction> {
    let encoded = this.cache.get(auction);
    if (!encoded) {
      encoded = this.build(auction);
      this.cache.set(auction, encoded);
      encoded.catch(() => this.cache.delete(auction));
    }
    return encoded;
  }

  private async build(auction: Auction): Promise<EncodedAuction> {
    const block = BigInt(auction.block);
    const tokens = [...new Set(auction.orders.flatMap((o) => [o.sellToken, o.buyToken]))];
    const erc20 = tokens.filter((t) => t !== BUY_ETH_ADDRESS);
    const [metadata, balances, gasPrice, liquidity] = await Promise.all([
      this.network.reader.tokensMetadata(erc20).catch(() => erc20.map(() => null)),
      this.network.reader.erc20Balances(this.network.settlement, erc20, { blockNumber: block }).catch(() => erc20.map(() => null)),
      this.network.reader.gasPrice().catch(() => 0n),
      this.pools.pools(routablePairs(auction.orders, this.network.connectors, this.network.wrappedNative), block),
    ]);
    // engines get the whole time limit, counted from when the auction is ready to send
    const deadline = new Date(this.now() + this.timeLimitMs);
    const info = new Map(erc20.map((t, i) => [t, { meta: metadata[i], balance: balances[i] ?? 0n }]));
    const solverAuction: SolverAuction = {
      id: String(auction.id),
      tokens: Object.fromEntries(
        tokens.map((t) => {
          const i = info.get(t);
          const price = auction.prices.get(t);
          return [t, { decimals: i?.meta?.decimals ?? null, symbol: i?.meta?.symbol ?? null, referencePrice: price ?? null, availableBalance: i?.balance ?? 0n, trusted: false }];
        }),
      ),
      orders: toSolverOrders(auction.orders),
      liquidity,
      effectiveGasPrice: gasPrice,
      deadline: deadline.toISOString(),
      surplusCapturingJitOrderOwners: [],
    };
    const wire = encodeAuction(solverAuction);
    return { auction: solverAuction, wire, body: JSON.stringify(wire), liquidity: new Map(liquidity.map((l) => [l.id, l])), deadline };
  }
}
