/**
 * The package's API: `import { startBatchbook } from 'batchbook'` starts a whole node (order book, auctions,
 * auxiliary API, an embedded devnet and database) for a test, on free ports, and stops it again.
 */
export { startBatchbook, BatchbookStartError } from './kit/start-batchbook.js';
export type { Batchbook, DevnetDescription, StartBatchbookOptions } from './kit/start-batchbook.js';
export type { DevnetAccount, DevnetContracts, DevnetPool, DevnetRole, DevnetToken } from './chain/devnet/deployment.js';
