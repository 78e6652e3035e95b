/**
 * Row types of every table, for Kysely. bytea columns are Uint8Array (Buffer on pg), numeric(78,0) columns are
 * decimal strings, bigint columns are JS numbers (block numbers, ids and timestamps fit), timestamptz are Date.
 */
import type { ColumnType, Generated } from 'kysely';

type Bytes = Uint8Array;
type Numeric = ColumnType<string, string, string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export interface ChainIdentityTable { chain_id: number; genesis_hash: Bytes; created_at: CreatedAt }

export interface AppDataTable { contract_app_data: Bytes; full_app_data: Bytes; created_at: CreatedAt }

export interface QuotesTable {
  id: Generated<number>;
  chain_id: number;
  sell_token: Bytes;
  buy_token: Bytes;
  sell_amount: Numeric;
  buy_amount: Numeric;
  fee_amount: Numeric;
  gas_amount: Numeric;
  gas_price: Numeric;
  sell_token_price: number;
  kind: 'sell' | 'buy';
  quote_kind: ColumnType<string, string | undefined, string>;
  signing_scheme: string;
  owner: Bytes | null;
  solver: string;
  verified: boolean;
  expiration: ColumnType<Date, Date | string, Date | string>;
  created_at: CreatedAt;
}

export interface OrdersTable {
  chain_id: number;
  uid: Bytes;
  owner: Bytes;
  created_at: CreatedAt;
  sell_token: Bytes;
  buy_token: Bytes;
  receiver: Bytes | null;
  sell_amount: Numeric;
  buy_amount: Numeric;
  valid_to: number;
  app_data: Bytes;
  fee_amount: Numeric;
  kind: 'sell' | 'buy';
  partially_fillable: boolean;
  signature: Bytes;
  signing_scheme: 'eip712' | 'ethsign' | 'presign' | 'eip1271';
  sell_token_balance: string;
  buy_token_balance: string;
  class: 'market' | 'limit' | 'liquidity';
  settlement_contract: Bytes;
  cancellation_timestamp: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  outside_market: ColumnType<boolean, boolean | undefined, boolean>;
  valid_from: number | null;
  /** 018_ethflow: the user's deadline of an eth-flow order (valid_to is 2^32 − 1); null for every other order */
  true_valid_to: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OrderQuotesTable {
  chain_id: number;
  order_uid: Bytes;
  sell_amount: Numeric;
  buy_amount: Numeric;
  fee_amount: Numeric;
  gas_amount: Numeric;
  gas_price: Numeric;
  sell_token_price: number;
  solver: string;
  verified: boolean;
}

export interface OrderEventsTable {
  id: Generated<number>;
  chain_id: number;
  order_uid: Bytes;
  timestamp: CreatedAt;
  label: string;
  reason: string | null;
}

interface LogKey { chain_id: number; block_number: number; log_index: number }

export interface TradesTable extends LogKey {
  order_uid: Bytes;
  owner: Bytes;
  sell_token: Bytes;
  buy_token: Bytes;
  sell_amount: Numeric;
  buy_amount: Numeric;
  fee_amount: Numeric;
  tx_hash: Bytes;
  block_timestamp: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface SettlementsTable extends LogKey { solver: Bytes; tx_hash: Bytes; auction_id: number | null }
export interface InvalidationsTable extends LogKey { order_uid: Bytes; owner: Bytes; tx_hash: Bytes }
export interface PresignatureEventsTable extends LogKey { owner: Bytes; order_uid: Bytes; signed: boolean }
export interface SettlementInteractionsTable extends LogKey { target: Bytes; value: Numeric; selector: Bytes; tx_hash: Bytes }

export interface AuctionsTable { chain_id: number; id: number; block: number; created_at: CreatedAt; auction: unknown | null; auction_gzip: Uint8Array | null }

export interface SolverCompetitionsTable {
  chain_id: number;
  auction_id: number;
  start_block: number;
  deadline_block: number;
  auction: unknown;
  solutions: unknown;
  created_at: CreatedAt;
}

export interface CompetitionSettlementsTable {
  chain_id: number;
  auction_id: number;
  solver: Bytes;
  tx_hash: Bytes | null;
  status: string;
  reason: string | null;
  created_at: CreatedAt;
  /** 003_auction */
  order_uids: ColumnType<Uint8Array[], Uint8Array[] | undefined, Uint8Array[]>;
  block_number: number | null;
  updated_at: CreatedAt;
  /** 008_settlement_safety */
  nonce: number | null;
  tx_hashes: ColumnType<Uint8Array[], Uint8Array[] | undefined, Uint8Array[]>;
  max_fee_per_gas: Numeric | null;
  max_priority_fee_per_gas: Numeric | null;
  sent_block: number | null;
  created_block: number | null;
  solution_hash: Bytes | null;
}

// 008_settlement_safety
export interface OrderExclusionsTable {
  chain_id: number;
  order_uid: Bytes;
  until_block: number;
  reason: string;
  created_at: CreatedAt;
}

export interface IndexerCheckpointsTable { chain_id: number; name: string; block_number: number; block_hash: Bytes; updated_at: CreatedAt }
export interface IndexedBlocksTable { chain_id: number; number: number; hash: Bytes; parent_hash: Bytes; timestamp: number }

export interface HookExecutionsTable extends LogKey {
  block_time: ColumnType<Date, Date | string, Date | string>;
  tx_hash: Bytes;
  order_uid: Bytes;
  hook_type: 'pre' | 'post';
  hook_index: number;
  target: Bytes;
  gas_limit: Numeric;
  success: boolean;
  app_hash: Bytes | null;
  app_code: string | null;
  app_id: string | null;
  is_bridging: boolean;
  destination_chain_id: string | null;
  destination_token_address: string | null;
}

/** 019_fee_records */
export interface OrderFeeRecordsTable {
  chain_id: number;
  auction_id: number;
  order_uid: Bytes;
  policies: string;
  recipients: ColumnType<string[], string[] | undefined, string[]>;
  sell_price: Numeric;
  buy_price: Numeric;
  network_fee: Numeric;
  created_at: CreatedAt;
}

export interface DB {
  order_fee_records: OrderFeeRecordsTable;
  chain_identity: ChainIdentityTable;
  app_data: AppDataTable;
  quotes: QuotesTable;
  orders: OrdersTable;
  order_quotes: OrderQuotesTable;
  order_events: OrderEventsTable;
  trades: TradesTable;
  settlements: SettlementsTable;
  invalidations: InvalidationsTable;
  presignature_events: PresignatureEventsTable;
  settlement_interactions: SettlementInteractionsTable;
  auctions: AuctionsTable;
  solver_competitions: SolverCompetitionsTable;
  competition_settlements: CompetitionSettlementsTable;
  order_exclusions: OrderExclusionsTable;
  indexer_checkpoints: IndexerCheckpointsTable;
  indexed_blocks: IndexedBlocksTable;
  hook_executions: HookExecutionsTable;
  erc20_transfers: Erc20TransfersTable;
  token_holder_balances: TokenHolderBalancesTable;
  amm_pools: AmmPoolsTable;
  amm_syncs: AmmSyncsTable;
  amm_swaps: AmmSwapsTable;
  indexer_sources: IndexerSourcesTable;
  proposed_trade_executions: ProposedTradeExecutionsTable;
  simulations: SimulationsTable;
  affiliate_codes: AffiliateCodesTable;
  affiliate_bindings: AffiliateBindingsTable;
  affiliate_trade_volumes: AffiliateTradeVolumesTable;
  affiliate_payouts: AffiliatePayoutsTable;
  affiliate_progress: AffiliateProgressTable;
  // 007_notifications
  notifications: NotificationsTable;
  notification_subscriptions: NotificationSubscriptionsTable;
  notification_deliveries: NotificationDeliveriesTable;
  notification_checkpoints: NotificationCheckpointsTable;
  // 018_ethflow
  ethflow_placements: EthflowPlacementsTable;
  ethflow_invalidations: EthflowInvalidationsTable;
  ethflow_refunds: EthflowRefundsTable;
}

// 018_ethflow
export interface EthflowPlacementsTable extends LogKey {
  tx_hash: Bytes;
  block_time: ColumnType<Date, Date | string, Date | string>;
  contract: Bytes;
  sender: Bytes;
  order_uid: Bytes;
  owner: Bytes;
  sell_token: Bytes;
  buy_token: Bytes;
  receiver: Bytes | null;
  sell_amount: Numeric;
  buy_amount: Numeric;
  valid_to: number;
  app_data: Bytes;
  fee_amount: Numeric;
  kind: string;
  partially_fillable: boolean;
  sell_token_balance: string;
  buy_token_balance: string;
  signing_scheme: 'eip1271' | 'presign';
  signature: Bytes;
  quote_id: Numeric;
  user_valid_to: number;
  placement_error: string | null;
  ingested_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
export interface EthflowInvalidationsTable extends LogKey { tx_hash: Bytes; order_uid: Bytes }
export interface EthflowRefundsTable extends LogKey { tx_hash: Bytes; order_uid: Bytes; refunder: Bytes }

// 002_indexer
type BlockTimestamp = ColumnType<Date, Date | string, Date | string>;

export interface Erc20TransfersTable extends LogKey {
  token: Bytes;
  from_address: Bytes;
  to_address: Bytes;
  value: Numeric;
  kind: 'transfer' | 'deposit' | 'withdrawal';
  tx_hash: Bytes;
}
export interface TokenHolderBalancesTable { chain_id: number; token: Bytes; holder: Bytes; balance: Numeric }
export interface AmmPoolsTable { chain_id: number; address: Bytes; token0: Bytes; token1: Bytes; factory: Bytes | null; created_block: number | null }
export interface AmmSyncsTable extends LogKey { pool: Bytes; reserve0: Numeric; reserve1: Numeric; block_timestamp: BlockTimestamp }
export interface AmmSwapsTable extends LogKey {
  pool: Bytes;
  sender: Bytes;
  recipient: Bytes;
  amount0_in: Numeric;
  amount1_in: Numeric;
  amount0_out: Numeric;
  amount1_out: Numeric;
  tx_hash: Bytes;
  block_timestamp: BlockTimestamp;
}
export interface IndexerSourcesTable { chain_id: number; name: string; address: Bytes; kind: 'settlement' | 'token' | 'pool' | 'factory' | 'ethflow'; from_block: number; backfilled_to: number | null }

// 003_auction (competition_settlements gains order_uids, block_number, updated_at: see CompetitionSettlementsTable)
export interface ProposedTradeExecutionsTable {
  chain_id: number;
  auction_id: number;
  solution_index: number;
  order_uid: Bytes;
  executed_sell: Numeric;
  executed_buy: Numeric;
}

// 004_simulation
export interface SimulationsTable {
  id: string;
  chain_id: number;
  provider: string;
  block_number: number | null;
  status: boolean;
  /** wire JSON; insert a JSON string, read back with ::text */
  request: unknown;
  result: unknown;
  created_at: CreatedAt;
  /** 009_structure: the client that asked (clientKey); null for runs stored before */
  client: string | null;
}

// 007_notifications
export interface NotificationsTable {
  id: string;
  chain_id: number;
  account: Bytes;
  type: string;
  message: string;
  /** JSON; insert a JSON string */
  metadata: unknown;
  created_at: ColumnType<Date, Date | string, Date | string>;
  produced_at: CreatedAt;
}
export interface NotificationSubscriptionsTable {
  id: string;
  account: Bytes;
  channel: string;
  target: string;
  types: string[] | null;
  secret: string | null;
  created_at: CreatedAt;
  last_error: string | null;
  last_error_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  // 014_notify_hardening: null until confirmed (email: with the mailed code)
  confirmed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  confirmation_code: string | null;
  consecutive_failures: Generated<number>;
  paused_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
export interface NotificationDeliveriesTable {
  notification_id: string;
  subscription_id: string;
  status: ColumnType<'pending' | 'queued' | 'delivered' | 'dead', 'pending' | 'queued' | 'delivered' | 'dead' | undefined, 'pending' | 'queued' | 'delivered' | 'dead'>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  created_at: CreatedAt;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  last_error: string | null;
}
export interface NotificationCheckpointsTable {
  chain_id: number;
  block_number: number;
  block_hash: Bytes;
  block_timestamp: number;
  order_event_id: ColumnType<number, number | undefined, number>;
  cancellations_since: ColumnType<Date, Date | string, Date | string>;
}
// 005_affiliate
export interface AffiliateCodesTable {
  code: string;
  wallet: Bytes;
  signed_message: Bytes;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  reward_amount: number;
  trigger_volume: number;
  time_cap_days: number;
  volume_cap: number;
  revenue_split_affiliate_pct: number;
  revenue_split_trader_pct: number;
  revenue_split_dao_pct: number;
  created_at: CreatedAt;
}
export interface AffiliateBindingsTable { trader: Bytes; code: string; chain_id: number; order_uid: Bytes; linked_since: ColumnType<Date, Date | string, Date | string> }
export interface AffiliateTradeVolumesTable extends LogKey {
  trader: Bytes;
  block_timestamp: BlockTimestamp;
  order_created_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  usd_volume: number;
  priced: boolean;
}
export interface AffiliatePayoutsTable { id: Generated<number>; address: Bytes; role: 'affiliate' | 'trader'; usd: number; note: string | null; created_at: CreatedAt }
export interface AffiliateProgressTable {
  name: string;
  position: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  block_number: number | null;
  block_timestamp: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  updated_at: CreatedAt;
}
