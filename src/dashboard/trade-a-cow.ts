/**
 * "Trade a CoW" (devnet only): the devnet's two demo traders place opposite orders on the wrapped native token and
 * the first USD stablecoin, signed here with the devnet's own keys and submitted through the same quote and order
 * services as the API, so that the next auction can match them against each other (a coincidence of wants).
 *
 * The trader holding more of the wrapped native token sells it, so repeated demos move funds back and forth.
 * Both limit prices leave 2 % below the quoted market price: the CoW clears between them.
 */
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { orderDomain, orderTypedData, ZERO_APP_DATA, type Order } from '../protocol/index.js';
import type { ChainNetwork } from '../chain/network.js';
import type { OrderService } from '../orderbook/orders/order-service.js';
import type { QuoteService } from '../orderbook/quotes/quote-service.js';

export type CowDemoErrorCode = 'NotDevnet' | 'NoMarket' | 'OutOfFunds';

export class CowDemoError extends Error {
  constructor(
    readonly code: CowDemoErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CowDemoError';
  }
}

export interface CowDemoOrder {
  uid: Hex;
  owner: Address;
  sellToken: Address;
  buyToken: Address;
  sellAmount: string;
  buyAmount: string;
}

export interface CowDemoDeps {
  network: ChainNetwork;
  quotes: QuoteService;
  orders: OrderService;
  now: () => number;
}

/** How much of the wrapped native token one demo trades (0.1 whole tokens). */
const DEMO_SELL_AMOUNT = 10n ** 17n;
const LIMIT_SLACK_PERCENT = 98n;
const VALID_FOR_SECONDS = 20 * 60;

export class CowDemo {
  constructor(private readonly deps: CowDemoDeps) {}

  /** Places the two opposite orders; returns them (the WETH seller first). */
  async place(): Promise<[CowDemoOrder, CowDemoOrder]> {
    const { network, quotes } = this.deps;
    const devnet = network.devnet;
    if (!devnet) throw new CowDemoError('NotDevnet', `"Trade a CoW" runs on the devnet only; ${network.name} is a real chain`);
    const weth = network.wrappedNative;
    const usd = network.usdStables[0];
    if (!weth || !usd) throw new CowDemoError('NoMarket', `${network.name} has no wrapped native token and USD stablecoin to trade`);
    const traders = devnet.describe().accounts.filter((a) => a.role === 'trader').slice(0, 2);
    if (traders.length < 2) throw new CowDemoError('NoMarket', 'the devnet has fewer than two demo traders');

    const holdings = await Promise.all(traders.map((t) => network.reader.erc20Balances(t.address as Address, [weth, usd])));
    const [first, second] = (holdings[0]![0] ?? 0n) >= (holdings[1]![0] ?? 0n) ? [0, 1] : [1, 0];
    const seller = traders[first]!;
    const buyer = traders[second]!;

    const quote = (await quotes.quote({ sellToken: weth, buyToken: usd, from: seller.address, kind: 'sell', sellAmountBeforeFee: DEMO_SELL_AMOUNT.toString(), priceQuality: 'fast' })) as { quote: { buyAmount: string } };
    const usdOut = BigInt(quote.quote.buyAmount);
    if (usdOut === 0n) throw new CowDemoError('NoMarket', 'the market quotes nothing for the demo amount');
    if ((holdings[first]![0] ?? 0n) < DEMO_SELL_AMOUNT || (holdings[second]![1] ?? 0n) < usdOut) {
      throw new CowDemoError('OutOfFunds', 'the demo traders lack funds for a CoW; mint some with POST /devnet/faucet');
    }
    const validTo = this.deps.now() + VALID_FOR_SECONDS;
    const sell = this.order(weth, usd, DEMO_SELL_AMOUNT, (usdOut * LIMIT_SLACK_PERCENT) / 100n, validTo);
    const buy = this.order(usd, weth, usdOut, (DEMO_SELL_AMOUNT * LIMIT_SLACK_PERCENT) / 100n, validTo);
    // submitted together so that both are in the same auction
    const placed = await Promise.all([this.submit(seller.privateKey as Hex, sell), this.submit(buyer.privateKey as Hex, buy)]);
    return placed as [CowDemoOrder, CowDemoOrder];
  }

  private order(sellToken: Address, buyToken: Address, sellAmount: bigint, buyAmount: bigint, validTo: number): Order {
    return {
      sellToken, buyToken, receiver: null, sellAmount, buyAmount, validTo, appData: ZERO_APP_DATA, feeAmount: 0n, kind: 'sell',
      partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
    };
  }

  private async submit(privateKey: Hex, order: Order): Promise<CowDemoOrder> {
    const account = privateKeyToAccount(privateKey);
    const signature = await account.signTypedData(orderTypedData(order, orderDomain(this.deps.network.chainId, this.deps.network.settlement)) as never);
    const uid = await this.deps.orders.create({
      sellToken: order.sellToken, buyToken: order.buyToken, receiver: null, sellAmount: order.sellAmount.toString(), buyAmount: order.buyAmount.toString(),
      validTo: order.validTo, feeAmount: '0', kind: order.kind, partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
      signingScheme: 'eip712', signature, from: account.address, appData: order.appData,
    });
    const owner = account.address.toLowerCase() as Address;
    return { uid, owner, sellToken: order.sellToken, buyToken: order.buyToken, sellAmount: order.sellAmount.toString(), buyAmount: order.buyAmount.toString() };
  }
}
