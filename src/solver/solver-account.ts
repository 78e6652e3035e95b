/**
 * The account the driver settles from on a real chain (RPC_URL_<chainId>): the operator's `SOLVER_PRIVATE_KEY`,
 * and only when the chain's settlement contract allow-lists it (GPv2AllowListAuthentication.isSolver). Without a
 * key, or with one the chain does not allow, auctions and competitions still run and nothing is submitted. The
 * devnet keeps its own solver account (undefined: the auction loop's default).
 *
 * @example
 *   const account = await resolveSolverAccount(network, config.solverPrivateKey, log); // LocalAccount | null | undefined
 */
import { parseAbi, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainNetwork } from '../chain/network.js';

const authenticationAbi = parseAbi([
  'function authenticator() view returns (address)',
  'function isSolver(address prospectiveSolver) view returns (bool)',
]);

export interface SolverAccountLogger {
  info(msg: string): void;
  warn(obj: object, msg?: string): void;
}

/** The settling account of `network`: undefined on the devnet (its own solver), null when nothing may be settled. */
export async function resolveSolverAccount(
  network: Pick<ChainNetwork, 'name' | 'chainId' | 'client' | 'settlement' | 'devnet'>,
  privateKey: Hex | null,
  logger: SolverAccountLogger,
): Promise<LocalAccount | null | undefined> {
  if (network.devnet) return undefined;
  if (privateKey === null) {
    logger.info(`${network.name}: SOLVER_PRIVATE_KEY is not set: auctions are built and solved, nothing is settled`);
    return null;
  }
  const account = privateKeyToAccount(privateKey);
  try {
    const authenticator = await network.client.readContract({ address: network.settlement, abi: authenticationAbi, functionName: 'authenticator' });
    const allowed = await network.client.readContract({ address: authenticator, abi: authenticationAbi, functionName: 'isSolver', args: [account.address] });
    if (!allowed) {
      logger.warn({ solver: account.address }, `${network.name}: SOLVER_PRIVATE_KEY's address ${account.address} is not an allow-listed solver of chain ${network.chainId}: auctions are built, nothing is settled`);
      return null;
    }
  } catch (err) {
    // the allow-list is checked again by the settlement itself (the driver simulates before it sends)
    logger.warn({ err: (err as Error).message }, `${network.name}: could not read the solver allow-list; settling from ${account.address}`);
    return account;
  }
  logger.info(`${network.name}: settling as the allow-listed solver ${account.address}`);
  return account;
}
