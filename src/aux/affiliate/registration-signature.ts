/**
 * Verifies a registration signature on the chains that count for rewards (see `countingChains`): an EOA's ECDSA
 * signature, an ERC-1271 smart wallet's `isValidSignature`, or an ERC-6492 counterfactual wallet's wrapped
 * signature (viem's `verifyTypedData` with a public client covers all three in one `eth_call`). Valid on any of
 * them → valid, so a smart wallet deployed on only one of those chains is accepted; a wallet that exists only on a
 * chain that does not count (the devnet beside real chains, whose keys are public) registers nothing. An ERC-6492
 * wrapper runs its factory call inside that `eth_call`, so its factory calldata is bounded (MAX_6492_FACTORY_DATA_BYTES)
 * and its inner signature too: anything larger is refused without asking a chain. A signature that does not verify anywhere (garbage
 * included) is `false`; when it did not verify and some chain could not be asked, the answer is unknown and the
 * call rejects with AffiliateError Unavailable rather than turning an outage into a 401.
 */
import { isErc6492Signature, parseErc6492Signature, size, type Address, type Hex, type PublicClient } from 'viem';
import { affiliateTypedData } from './affiliate-code.js';
import { AffiliateError } from './affiliate-error.js';

export interface SignatureChain {
  name: string;
  client: Pick<PublicClient, 'verifyTypedData'>;
}

/** factory calldata an ERC-6492 signature may carry (a factory's deploy(owner, salt) call needs well under this) */
export const MAX_6492_FACTORY_DATA_BYTES = 1024;
/** the wrapped signature (an ECDSA signature, or a few for a multisig) */
export const MAX_6492_INNER_SIGNATURE_BYTES = 2048;

/** False for an ERC-6492 signature whose factory calldata or inner signature is too large (or that does not parse). */
export function erc6492WithinBounds(signature: Hex): boolean {
  if (!isErc6492Signature(signature)) return true;
  try {
    const parsed = parseErc6492Signature(signature);
    return size(parsed.data ?? '0x') <= MAX_6492_FACTORY_DATA_BYTES && size(parsed.signature) <= MAX_6492_INNER_SIGNATURE_BYTES;
  } catch {
    return false;
  }
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
    if (!erc6492WithinBounds(signature)) return false;
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
