/**
 * A JSON-RPC proxy in front of a real node that injects faults on demand, for tests of retries and range
 * shrinking: whole requests failing with an HTTP status, and `eth_getLogs` refusing ranges wider than a limit
 * the way public providers do ("query returned more than 10000 results ... [0xa, 0xb]").
 *
 * @example
 *   const proxy = await startFaultyRpcProxy(anvilUrl);
 *   proxy.failNext(2, 503);            // the next two HTTP requests get 503
 *   proxy.maxLogRange = 10;            // eth_getLogs over more than 10 blocks is refused
 *   proxy.stalled = true;              // requests are held (a node that stopped answering) until set false
 *   await proxy.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface RpcRequest {
  jsonrpc: string;
  id: number | string;
  method: string;
  params?: unknown[];
}

export interface FaultyRpcProxy {
  readonly url: string;
  /** fail the next `count` HTTP requests with `status` */
  failNext(count: number, status?: number): void;
  /** refuse every HTTP request with 503 until set back to false */
  down: boolean;
  /** hold every HTTP request (a stalled node) until set back to false, then forward it */
  stalled: boolean;
  /** refuse eth_getLogs spanning more blocks than this (null: no limit) */
  maxLogRange: number | null;
  /** HTTP requests received, and JSON-RPC calls by method */
  readonly counts: { http: number; failed: number; methods: Record<string, number> };
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFaultyRpcProxy(upstream: string): Promise<FaultyRpcProxy> {
  let failCount = 0;
  let failStatus = 503;
  const counts = { http: 0, failed: 0, methods: {} as Record<string, number> };

  const refuseRange = (call: RpcRequest): object | null => {
    if (call.method !== 'eth_getLogs' || proxy.maxLogRange === null) return null;
    const filter = (call.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
    if (!filter.fromBlock?.startsWith('0x') || !filter.toBlock?.startsWith('0x')) return null;
    const from = Number.parseInt(filter.fromBlock, 16);
    const to = Number.parseInt(filter.toBlock, 16);
    if (to - from + 1 <= proxy.maxLogRange) return null;
    const suggestion = `[0x${from.toString(16)}, 0x${(from + proxy.maxLogRange - 1).toString(16)}]`;
    return { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: `query returned more than 10000 results. Try with this block range ${suggestion}.` } };
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counts.http++;
    const body = await readBody(req);
    let gone = false;
    res.once('close', () => (gone = true));
    while (proxy.stalled && !gone) await new Promise((r) => setTimeout(r, 50));
    if (gone) return; // the client gave up (its timeout) while the node stalled
    if (proxy.down || failCount > 0) {
      if (failCount > 0) failCount--;
      counts.failed++;
      res.writeHead(proxy.down ? 503 : failStatus, { 'content-type': 'text/plain' }).end('injected failure');
      return;
    }
    const parsed = JSON.parse(body) as RpcRequest | RpcRequest[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    for (const c of calls) counts.methods[c.method] = (counts.methods[c.method] ?? 0) + 1;
    const refused = new Map<RpcRequest, object>();
    for (const c of calls) {
      const r = refuseRange(c);
      if (r) refused.set(c, r);
    }
    const forward = calls.filter((c) => !refused.has(c));
    let answers: Array<{ id: unknown }> = [];
    if (forward.length > 0) {
      const upstreamRes = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Array.isArray(parsed) ? forward : forward[0]) });
      const json = (await upstreamRes.json()) as { id: unknown } | Array<{ id: unknown }>;
      answers = Array.isArray(json) ? json : [json];
    }
    const all = [...answers, ...refused.values()] as Array<{ id: unknown }>;
    const out = Array.isArray(parsed) ? all : all[0];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const proxy: FaultyRpcProxy = {
    url: `http://127.0.0.1:${port}`,
    failNext(count, status = 503) {
      failCount = count;
      failStatus = status;
    },
    down: false,
    stalled: false,
    maxLogRange: null,
    counts,
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
  return proxy;
}
