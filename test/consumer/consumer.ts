// Type-checked in a consumer project (scripts/consumer-e2e.mjs) under moduleResolution NodeNext: the options and
// the handle are typed precisely — each @ts-expect-error below fails the check if the types were `any`.
import { startBatchbook, BatchbookStartError, type Batchbook, type StartBatchbookOptions } from 'batchbook';

const options: StartBatchbookOptions = { port: 0, devnetPort: 0, deterministic: true, env: { LOG_LEVEL: 'info' }, fork: { url: 'http://127.0.0.1:8545', block: 1n } };
// @ts-expect-error port is a number
const wrongPort: StartBatchbookOptions = { port: '8080' };
// @ts-expect-error env values are strings
const wrongEnv: StartBatchbookOptions = { env: { PORT: 8080 } };

export async function typed(): Promise<void> {
  const bb: Batchbook = await startBatchbook(options);
  const url: string = bb.url;
  const chainId: number = bb.chainId;
  const settlement: `0x${string}` = bb.contracts.settlement;
  const decimals: number = bb.tokens[0]!.decimals;
  const role: 'trader' | 'solver' | 'market-bot' | 'deployer' = bb.accounts[0]!.role;
  // @ts-expect-error no such field on the handle
  bb.orderbookUrl;
  // @ts-expect-error chainId is a number
  const wrong: string = bb.chainId;
  const stopped: Promise<void> = bb.stop();
  await stopped;
  const err = new BatchbookStartError('x', 'tail');
  void [url, chainId, settlement, decimals, role, wrong, wrongPort, wrongEnv, err.logTail];
}
