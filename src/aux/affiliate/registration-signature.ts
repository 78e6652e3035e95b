/**
 * Verifies a registration signature on every chain we serve: an EOA's ECDSA signature, an ERC-1271 smart
 * wallet's `isValidSignature`, or an ERC-6492 counterfactual wallet's wrapped signature (viem's
 * `verifyTypedData` with a public client covers all three in one `eth_call`). Valid on any chain → valid, so a
 * smart wallet deployed on only one of our chains is accepted. A signature that does not verify anywhere (garbage
 * included) is `false`; when it did not verify and some chain could not be asked, the answer is unknown and the
 * call rejects with AffiliateError Unavailable rather than turning an outage into a 401.
 */
import type { Address, Hex, PublicClient } from 'viem';
import { affiliateTypedData } from './affiliate-code.js';
import { AffiliateError } from './affiliate-error.js';

export interface SignatureChain {
  name: string;
  client: Pick<PublicClient, 'verifyTypedData'>;
}

const TRANSPORT_ERRORS = new Set(['HttpRequestError', 'TimeoutError', 'WebSocketRequestError', 'LimitExceededRpcError']);

function isTransportFailure(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (TRANSPORT_ERRORS.has(e.name)) return true;
  }
  return false;
}

export class RegistrationSignature {
  constructor(private readonly options: { domainName: string; chains: readonly SignatureChain[] }) {}

  async verify(walletAddress: Address, code: string, signature: Hex): Promise<boolean> {
    const typed = affiliateTypedData(this.options.domainName, walletAddress, code);
    const outcomes = await Promise.all(
      this.options.chains.map(async (chain) => {
        try {
          return (await chain.client.verifyTypedData({ address: walletAddress, signature, ...typed })) ? 'valid' : 'invalid';
        } catch (err) {
          // malformed signatures make viem (or the validator call) throw: that is "does not verify"
          return isTransportFailure(err) ? `unreachable: ${chain.name}` : 'invalid';
        }
      }),
    );
    if (outcomes.includes('valid')) return true;
    const unreachable = outcomes.filter((o) => o.startsWith('unreachable'));
    if (unreachable.length > 0) throw new AffiliateError('Unavailable', `could not verify the signature (${unreachable.join(', ')}); try again`);
    return false;
  }
}
