/**
 * Off-chain cancellations (reference orderbook.md §3.4, §3.5): a signature by the owner over
 * `OrderCancellation(bytes orderUid)` or `OrderCancellations(bytes[] orderUids)` in the settlement domain.
 * The single endpoint accepts both types (the SDK signs the batch type with one UID). Batches are all or nothing.
 */
import type { Address, Hex } from 'viem';
import { SignatureError, orderDomain, recoverCancellationSigner } from '../../protocol/index.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import type { OrderRepository, StoredOrder } from './order-repository.js';
import { isFullyExecuted, isInvalidated } from './order-status.js';

export const MAX_CANCELLATION_UIDS = 128;

export interface CancellationRequest {
  signature: string;
  signingScheme: 'eip712' | 'ethsign';
}

export class CancellationService {
  constructor(
    private readonly deps: { chainId: number; settlement: Address; orders: OrderRepository; now: () => number },
  ) {}

  private checkCancellable(order: StoredOrder | null, uid: Hex): StoredOrder {
    if (!order) throw new OrderBookError('OrderNotFound', `order ${uid} was not found`);
    if (order.signingScheme === 'presign' || order.signingScheme === 'eip1271') {
      throw new OrderBookError('OnChainOrder', `${order.signingScheme} orders can only be cancelled on chain (invalidateOrder or setPreSignature false)`);
    }
    if (isFullyExecuted(order)) throw new OrderBookError('OrderFullyExecuted', `order ${uid} is already fully executed`);
    if (isInvalidated(order)) throw new OrderBookError('AlreadyCancelled', `order ${uid} is already cancelled`);
    if (order.validTo < this.deps.now()) throw new OrderBookError('OrderExpired', `order ${uid} has already expired`);
    return order;
  }

  private async recover(params: Parameters<typeof recoverCancellationSigner>[0]): Promise<Address> {
    try {
      return (await recoverCancellationSigner(params)).toLowerCase() as Address;
    } catch (err) {
      if (err instanceof SignatureError) throw new OrderBookError('InvalidSignature', `Malformed signature: ${err.message}`);
      throw err;
    }
  }

  /** DELETE /api/v1/orders/{uid} */
  async cancelOne(uid: Hex, request: CancellationRequest): Promise<void> {
    const { chainId, settlement, orders } = this.deps;
    const id = uid.toLowerCase() as Hex;
    const order = this.checkCancellable(await orders.get(chainId, id), id);
    const domain = orderDomain(chainId, settlement);
    const single = await this.recover({ scheme: request.signingScheme, signature: request.signature, domain, orderUid: id });
    if (single !== order.owner) {
      const batch = await this.recover({ scheme: request.signingScheme, signature: request.signature, domain, orderUids: [id] });
      if (batch !== order.owner) throw new OrderBookError('WrongOwner', `the cancellation is signed by ${single}, not by the order owner ${order.owner}`);
    }
    await orders.transaction(async (tx) => {
      const again = this.checkCancellable(await orders.get(chainId, id, tx), id);
      await orders.markCancelled(chainId, [again.uid], tx);
    });
  }

  /** DELETE /api/v1/orders — every UID must be cancellable and owned by the signer, else nothing is cancelled. */
  async cancelMany(uids: Hex[], request: CancellationRequest): Promise<void> {
    const { chainId, settlement, orders } = this.deps;
    if (uids.length === 0) throw new OrderBookError('InvalidParameter', 'orderUids must not be empty');
    if (uids.length > MAX_CANCELLATION_UIDS) throw new OrderBookError('InvalidParameter', `at most ${MAX_CANCELLATION_UIDS} orderUids per request`);
    const ids = uids.map((u) => u.toLowerCase() as Hex);
    const signer = await this.recover({ scheme: request.signingScheme, signature: request.signature, domain: orderDomain(chainId, settlement), orderUids: ids });
    await orders.transaction(async (tx) => {
      const found = new Map((await orders.getMany(chainId, ids, tx)).map((o) => [o.uid, o]));
      const checked = ids.map((id) => this.checkCancellable(found.get(id) ?? null, id));
      for (const order of checked) {
        if (order.owner !== signer) throw new OrderBookError('WrongOwner', `order ${order.uid} is owned by ${order.owner}, the cancellation is signed by ${signer}`);
      }
      await orders.markCancelled(chainId, ids, tx);
    });
  }
}
