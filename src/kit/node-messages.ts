/** What a node started by `startBatchbook` tells the process that holds it, over their IPC channel. */
export interface NodeReadyMessage {
  type: 'batchbook:ready';
  /** `http://127.0.0.1:<port>`, no trailing slash */
  url: string;
  /** the devnet's JSON-RPC URL, null without a devnet */
  rpcUrl: string | null;
  /** the devnet's anvil, null without a devnet (the holder makes sure it has exited after stop) */
  anvilPid: number | null;
}

export function isNodeReadyMessage(message: unknown): message is NodeReadyMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'batchbook:ready';
}

/** The holder's word that the node's data dir is a temporary one of its own: the node removes it if the holder dies. */
export interface TemporaryDataDirMessage {
  type: 'batchbook:temporary-data-dir';
}

export function isTemporaryDataDirMessage(message: unknown): message is TemporaryDataDirMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'batchbook:temporary-data-dir';
}
