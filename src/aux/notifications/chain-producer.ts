/**
 * A producer for one served network, from its reader and client: token labels from the reader's metadata cache,
 * the head from the reader, block headers from the client.
 */
import type { Kysely } from 'kysely';
import type { ChainNetwork } from '../../chain/network.js';
import type { DB } from '../../db/schema.js';
import { NotificationProducer, type ProducerLogger } from './notification-producer.js';

export interface ProducerSettings {
  /** null: 0 on the devnet, 2 on real chains */
  confirmations: number | null;
  priceImprovementBps: number;
}

export function producerFor(network: ChainNetwork, db: Kysely<DB>, settings: ProducerSettings, extra: { logger?: ProducerLogger; onDeliveries?: (count: number) => void } = {}): NotificationProducer {
  return new NotificationProducer({
    db,
    chain: { chainId: network.chainId, name: network.name },
    tokens: (tokens) => network.reader.tokensMetadata(tokens),
    head: async () => Number(await network.reader.blockNumber()),
    block: async (number) => {
      const block = await network.client.getBlock({ blockNumber: BigInt(number) });
      return { hash: block.hash, timestamp: Number(block.timestamp) };
    },
    confirmations: settings.confirmations ?? (network.devnet ? 0 : 2),
    priceImprovementBps: settings.priceImprovementBps,
    ...extra,
  });
}
