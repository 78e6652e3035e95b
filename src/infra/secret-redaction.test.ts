import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createPublicClient, http } from 'viem';
import { redactingStream, redactUrlSecrets } from './secret-redaction.js';

describe('redactUrlSecrets', () => {
  it('keeps scheme, host and port; removes paths, queries and user info', () => {
    assert.equal(redactUrlSecrets('URL: https://eth-mainnet.g.alchemy.com/v2/abcDEF123'), 'URL: https://eth-mainnet.g.alchemy.com/***');
    assert.equal(redactUrlSecrets('wss://user:pa55@node.example:8546/ws?apikey=k3y done'), 'wss://node.example:8546/*** done');
    assert.equal(redactUrlSecrets('"http://127.0.0.1:8545"'), '"http://127.0.0.1:8545"');
    assert.equal(redactUrlSecrets('listening at http://127.0.0.1:8080/'), 'listening at http://127.0.0.1:8080/');
    assert.equal(redactUrlSecrets('{"msg":"failed https://rpc.example/key\\nnext"}'), '{"msg":"failed https://rpc.example/***\\nnext"}');
    assert.equal(redactUrlSecrets('no url here /v2/path'), 'no url here /v2/path');
  });

  it('removes the key from a real viem error message and from a log line that carries the error', async () => {
    const secretUrl = 'http://alice:s3cret-pass@127.0.0.1:9/v2/SECRET-API-KEY?token=SECRET-TOKEN';
    const client = createPublicClient({ transport: http(secretUrl, { retryCount: 0, timeout: 2000 }) });
    const error = await client.getBlockNumber().then(
      () => assert.fail('port 9 answered'),
      (err: Error) => err,
    );
    assert.match(error.message, /SECRET-API-KEY/, 'viem puts the URL into its message (the reason for this function)');
    assert.doesNotMatch(redactUrlSecrets(error.message), /SECRET|s3cret/);

    const lines: string[] = [];
    const logger = pino({ level: 'info' }, redactingStream({ write: (line: string) => lines.push(line) }));
    logger.error({ err: error, rpcUrl: secretUrl }, `chain read failed: ${error.message}`);
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0]!, /SECRET|s3cret/);
    assert.match(lines[0]!, /http:\/\/127\.0\.0\.1:9\/\*\*\*/);
  });
});

describe('redactUrlSecrets keeps the node\'s own addresses', () => {
  it('a URL under an own origin stays whole; any other URL is still cut', () => {
    const text = 'order book: http://127.0.0.1:8080/devnet/api/v1 rpc: https://rpc.example/v2/key123';
    assert.equal(redactUrlSecrets(text, ['http://127.0.0.1:8080']), 'order book: http://127.0.0.1:8080/devnet/api/v1 rpc: https://rpc.example/***');
    assert.equal(redactUrlSecrets('http://127.0.0.1:80800/x', ['http://127.0.0.1:8080']), 'http://127.0.0.1:80800/***', 'a prefix of the port is another origin');
  });
});
