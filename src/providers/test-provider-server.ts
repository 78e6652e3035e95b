/**
 * Tests only: a local HTTP server (node:http, port 0) that plays an external provider by speaking its documented
 * wire format — the only stand-in the provider tests use. It records every request and answers through a
 * handler that the test can swap at any time; `'hang'` never answers (to exercise timeouts).
 *
 * @example
 *   const cg = await startProviderServer((req) => ({ status: 200, body: { [token]: { usd: 1.5 } } }));
 *   ... new CoingeckoClient({ apiKey: 'k', baseUrl: cg.url }) ...
 *   await cg.close();
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** the body as received (binary bodies, e.g. an encrypted web push payload) */
  bytes: Buffer;
}

export type ProviderReply = { status: number; body?: unknown; raw?: string; headers?: Record<string, string> } | 'hang';
export type ProviderHandler = (request: RecordedRequest) => ProviderReply | Promise<ProviderReply>;

export interface ProviderServer {
  url: string;
  requests: RecordedRequest[];
  /** requests whose path starts with the prefix */
  count(pathPrefix?: string): number;
  setHandler(handler: ProviderHandler): void;
  /** errors thrown by the handler (e.g. a failed assertion about the request); each also answered 500 */
  failures: unknown[];
  /** throws the first handler error, so an assertion failing inside the server fails the test */
  assertNoFailures(): void;
  close(): Promise<void>;
}

export async function startProviderServer(handler: ProviderHandler): Promise<ProviderServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const failures: unknown[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), bytes: Buffer.concat(chunks) };
      requests.push(recorded);
      let reply: ProviderReply;
      try {
        reply = await current(recorded);
      } catch (err) {
        failures.push(err);
        reply = { status: 500, body: { error: String(err) } };
      }
      if (reply === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const text = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (prefix = '') => requests.filter((r) => r.path.startsWith(prefix)).length,
    setHandler(next) {
      current = next;
    },
    failures,
    assertNoFailures() {
      if (failures.length > 0) throw failures[0];
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
