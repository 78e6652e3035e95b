import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { chooseLogFormat, createProcessLogger } from './process-logger.js';

function fakeStdout(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream & PassThrough;
  Object.assign(stream, { isTTY });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('process logger', () => {
  it('is JSON unless stdout is a terminal', () => {
    assert.equal(chooseLogFormat({ isTTY: true }), 'pretty');
    assert.equal(chooseLogFormat({ isTTY: false }), 'json');
    assert.equal(chooseLogFormat({}), 'json');
  });

  it('writes readable lines to a terminal, without JSON, honouring the level', async () => {
    const out = fakeStdout(true);
    const logger = createProcessLogger('info', out.stream);
    logger.info('  API docs:             http://127.0.0.1:8080/docs');
    logger.debug('a request line');
    logger.warn('careful');
    await new Promise((r) => setImmediate(r));
    const lines = out.text().trim().split('\n');
    assert.equal(lines.length, 2, out.text());
    assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\] .*INFO.*: .*API docs:\s+http:\/\/127\.0\.0\.1:8080\/docs/);
    assert.match(lines[1]!, /WARN.*careful/);
    assert.ok(!out.text().includes('{"level"'));
  });
});
