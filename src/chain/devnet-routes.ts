/** GET /devnet and POST /devnet/faucet: what the embedded devnet is, and free test tokens (devnet mode only). */
import { Type } from '@sinclair/typebox';
import type { HttpServer } from '../http/server.js';
import { sendJson } from '../http/server.js';
import { AuxError } from '../http/errors.js';
import { FaucetError, type Devnet } from './devnet/index.js';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });

const Description = Type.Object({
  chainId: Type.Integer(),
  rpcUrl: Type.String(),
  blockTime: Type.Number(),
  contracts: Type.Record(Type.String(), Address),
  tokens: Type.Array(Type.Object({ symbol: Type.String(), name: Type.String(), address: Address, decimals: Type.Integer() })),
  pools: Type.Array(Type.Object({ address: Address, token0: Address, token1: Address })),
  accounts: Type.Array(Type.Object({ address: Address, privateKey: Type.String(), role: Type.String() }, { additionalProperties: true })),
  fork: Type.Optional(Type.Object({ chainId: Type.Integer(), block: Type.Integer() }, { description: 'fork mode: the chain forked and the fork block (its hash is the upstream\'s)' })),
});

const FaucetBody = Type.Object({
  address: Address,
  token: Type.Optional(Type.String({ description: 'token symbol or address; omitted (or ETH) for native ETH' })),
  amount: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'whole token units, e.g. "1.5"' })),
});

export function registerDevnetRoutes(server: HttpServer, devnet: Devnet): void {
  server.get(
    '/devnet',
    { schema: { tags: ['devnet'], summary: 'The embedded devnet: RPC URL, contracts, tokens, pools and demo accounts', response: { 200: Description } }, config: { api: 'aux' } },
    async (_req, reply) => sendJson(reply, 200, devnet.describe()),
  );

  server.post(
    '/devnet/faucet',
    {
      schema: {
        tags: ['devnet'],
        summary: 'Mint test tokens (or native ETH) to an address, mined in the next block',
        body: FaucetBody,
        response: {
          200: Type.Object({ txHash: Type.String(), token: Address, symbol: Type.String(), recipient: Address, amount: Type.String(), decimals: Type.Integer() }),
          400: Type.Object({ message: Type.String() }),
        },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      try {
        const r = await devnet.faucet({ address: req.body.address, token: req.body.token, amount: req.body.amount });
        return sendJson(reply, 200, { txHash: r.hash, token: r.token.toLowerCase(), symbol: r.symbol, recipient: r.recipient.toLowerCase(), amount: r.amount.toString(), decimals: r.decimals });
      } catch (err) {
        if (err instanceof FaucetError) throw new AuxError(err.code === 'Unavailable' ? 503 : 400, err.message);
        throw err;
      }
    },
  );
}
