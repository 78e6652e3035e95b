/**
 * Webhook channel throughput (issue 11): signed deliveries per second through `WebhookChannel.deliver` (Standard
 * Webhooks signing, DNS + address check, keep-alive connections opened only to checked addresses, status judgement) to a local
 * receiver, divided by a bare POST loop (node:http, keep-alive agent, the same body, no signing) to the same
 * receiver, on the same machine in the same run. The receiver runs in a worker thread so it does not share the
 * senders' event loop; both sides keep CONCURRENCY requests in flight. Rounds are paired (bare then channel, then
 * the other way round) and the figure is the median of the per-round ratios.
 */
import { request, Agent } from 'node:http';
import { Worker } from 'node:worker_threads';
import type { Figure } from './figure.js';
import type { OutgoingNotification } from '../src/notify/channels/channel.js';
import { generateWebhookSecret, webhookBody, WebhookChannel } from '../src/notify/channels/webhook-channel.js';

const CONCURRENCY = 16;
const ROUND_MS = 1_500;
const ROUNDS = 4;

/** A receiver that reads each body and answers 204 (plain JS: eval workers are not transpiled). */
const RECEIVER = `
(async () => {
  const { parentPort } = await import('node:worker_threads');
  const http = await import('node:http');
  const server = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); });
  server.keepAliveTimeout = 5000;
  server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
})();
`;

const notification: OutgoingNotification = {
  id: 'order_filled-0x01-0x02-3',
  account: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  type: 'order_filled',
  message: 'Sold 0.1 WETH for 299.12 USDC on devnet',
  timestamp: new Date().toISOString(),
  metadata: { orderId: '0x01', chainId: 31337, executedAmount: '100000000000000000', txHash: '0x02' },
};

async function perSecond(send: () => Promise<boolean>, durationMs: number): Promise<number> {
  let done = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) if (await send()) done += 1;
  }));
  return done / ((performance.now() - started) / 1000);
}

export async function benchWebhookChannel(): Promise<Figure> {
  const worker = new Worker(RECEIVER, { eval: true });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  const url = `http://127.0.0.1:${port}/hook`;
  const body = webhookBody(notification);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const bare = () => new Promise<boolean>((resolve) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 204));
    });
    req.on('error', () => resolve(false));
    req.end(body);
  });
  const channel = new WebhookChannel({ allowPrivateTargets: true });
  const target = { subscriptionId: 'bench', channel: 'webhook' as const, target: url, secret: generateWebhookSecret() };
  const signed = async () => (await channel.deliver(notification, target)).ok;
  try {
    await perSecond(bare, 300);
    await perSecond(signed, 300);
    const ratios: number[] = [];
    const bareRates: number[] = [];
    const channelRates: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? [bare, signed] : [signed, bare];
      const [first, second] = [await perSecond(order[0]!, ROUND_MS), await perSecond(order[1]!, ROUND_MS)];
      const [b, c] = round % 2 === 0 ? [first, second] : [second, first];
      bareRates.push(b);
      channelRates.push(c);
      ratios.push(c / b);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return {
      name: 'webhook deliveries (signed, address-checked)',
      value: median(channelRates),
      unit: 'deliveries/s',
      baseline: median(bareRates),
      baselineUnit: 'bare keep-alive POSTs/s',
      ratio: median(ratios),
      note: `${CONCURRENCY} in flight, median of ${ROUNDS} paired rounds; connections kept alive per receiver, opened only to checked addresses`,
    };
  } finally {
    agent.destroy();
    await worker.terminate();
  }
}
