import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forkUpstream, ForkUpstreamError, redactForkUrl } from './fork-upstream.js';

describe('fork upstream reads', () => {
  it('redacts the URL, its host and its key wherever they appear', () => {
    const url = 'https://user:pa55word@eth.example.org:8443/v3/sk-0123456789?apikey=sk-0123456789';
    const text = `failed ${url}; connect eth.example.org:8443; key sk-0123456789; auth pa55word`;
    const out = redactForkUrl(text, url);
    for (const secret of ['sk-0123456789', 'eth.example.org', 'pa55word']) assert.ok(!out.includes(secret), `${secret} in ${out}`);
    assert.match(out, /FORK_URL/);
  });

  it('reports an upstream error without the URL', async () => {
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'denied for http://127.0.0.1/secret-key-42' } })));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/secret-key-42`;
    try {
      await assert.rejects(forkUpstream(url).chainId(), (err: unknown) => err instanceof ForkUpstreamError && /^fork: the upstream \(FORK_URL\) refused eth_chainId: /.test(err.message) && !err.message.includes('secret-key-42'));
    } finally {
      server.close();
    }
  });
});
