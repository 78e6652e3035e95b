/**
 * GET /{chainId}/accounts/{address}/partnerFees (issue 23; ours, production has no such endpoint) — what an
 * integrator accrued as partner fees: one entry per executed partner-fee policy whose app-data recipient is the
 * address, newest first, read back from the settlement's executed amounts as soon as its trade is indexed, and
 * the totals per token. An unknown address gets empty arrays; a malformed one 400 `{message}`; a chain not served 404.
 *
 * @example
 *   registerPartnerFeeRoutes(server, { chains: new Map([[31337, new TradeFeeReader({ chainId: 31337, db })]]) });
 */
import { Type } from '@sinclair/typebox';
import type { Address, Hex } from 'viem';
import type { HttpServer } from '../../http/server.js';
import { AuxError } from '../../http/errors.js';

/** The executed fees of the trades that carry a partner-fee policy of `recipient` (newest first). */
export interface PartnerFeeSource {
  forRecipient(recipient: Address): Promise<
    Array<{ orderUid: Hex; txHash: Hex; blockNumber: number; protocolFees: Array<{ amount: bigint; token: Address; recipient: Address | null }> }>
  >;
}

export interface PartnerFeeAccount {
  recipient: Address;
  totals: Array<{ token: Address; amount: string }>;
  fees: Array<{ orderUid: Hex; txHash: Hex; blockNumber: number; token: Address; amount: string }>;
}

/** The account of `recipient` (lowercase) from its trades' executed fees. */
export async function partnerFeeAccount(source: PartnerFeeSource, recipient: Address): Promise<PartnerFeeAccount> {
  const fees: PartnerFeeAccount['fees'] = [];
  const totals = new Map<Address, bigint>();
  for (const trade of await source.forRecipient(recipient)) {
    for (const fee of trade.protocolFees) {
      if (fee.recipient !== recipient) continue;
      fees.push({ orderUid: trade.orderUid, txHash: trade.txHash, blockNumber: trade.blockNumber, token: fee.token, amount: fee.amount.toString() });
      totals.set(fee.token, (totals.get(fee.token) ?? 0n) + fee.amount);
    }
  }
  return { recipient, totals: [...totals].map(([token, amount]) => ({ token, amount: amount.toString() })), fees };
}

const Params = Type.Object({
  chainId: Type.String({ pattern: '^[0-9]{1,20}$', description: 'numeric chain id' }),
  userAddress: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'the partner-fee recipient (any letter case)' }),
});
const Amount = Type.String({ pattern: '^[0-9]+$' });
const AddressText = Type.String({ pattern: '^0x[0-9a-f]{40}$' });
const Account = Type.Object({
  recipient: AddressText,
  totals: Type.Array(Type.Object({ token: AddressText, amount: Amount })),
  fees: Type.Array(Type.Object({ orderUid: Type.String(), txHash: Type.String(), blockNumber: Type.Integer(), token: AddressText, amount: Amount })),
});
const Message = Type.Object({ message: Type.String() });

export function registerPartnerFeeRoutes(server: HttpServer, ctx: { chains: ReadonlyMap<number, PartnerFeeSource> }): void {
  server.get(
    '/:chainId/accounts/:userAddress/partnerFees',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Partner fees accrued by a recipient',
        description: 'Every executed partner-fee policy (app data `metadata.partnerFee`) whose recipient is the address, newest first (at most the 10 000 newest trades), in the surplus token of each trade, and the totals per token.',
        params: Params,
        response: { 200: Account, 400: Message, 404: Message },
      },
    },
    async (req) => {
      const { chainId, userAddress: address } = req.params as { chainId: string; userAddress: string };
      const source = ctx.chains.get(Number(chainId));
      if (!source) throw new AuxError(404, `chain ${chainId} is not served here (served: ${[...ctx.chains.keys()].join(', ') || 'none'})`);
      return partnerFeeAccount(source, address.toLowerCase() as Address);
    },
  );
}
