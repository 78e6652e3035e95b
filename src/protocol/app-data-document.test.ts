import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppDataError, MAX_APP_DATA_BYTES, parseAppDataDocument } from './app-data-document.js';
import { appDataHash } from './app-data-hash.js';
import { UID_VECTOR } from './test-vectors.js';

const TARGET = '0x0000000000000000000000000000000000000001';
const RECIPIENT = '0xB6BAd41ae76A11D10f7b0E664C5007b908bC77C9';

function fieldError(field: string | null, code = 'invalidField') {
  return (error: unknown) => error instanceof AppDataError && error.code === code && error.field === field && (field === null || error.message.includes(field));
}

function withMetadata(metadata: unknown): string {
  return JSON.stringify({ version: '1.4.0', appCode: 'test', metadata });
}

describe('parseAppDataDocument (§6.8)', () => {
  it('accepts {} with empty defaults and its hash', () => {
    const doc = parseAppDataDocument('{}');
    assert.equal(doc.hash, '0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d');
    assert.equal(doc.byteLength, 2);
    assert.deepEqual(doc.protocol, {
      replacedOrderUid: null,
      signer: null,
      hooks: { pre: [], post: [] },
      partnerFees: [],
      enableFastPath: false,
      validFrom: null,
    });
  });

  it('extracts the protocol metadata subset, lowercasing addresses and hex', () => {
    const text = withMetadata({
      replacedOrder: { uid: UID_VECTOR.uid.toUpperCase().replace('0X', '0x') },
      signer: RECIPIENT,
      hooks: {
        version: '0.2.0',
        pre: [{ target: TARGET, callData: '0xABCD', gasLimit: '21000', dappId: 'x' }],
        post: [{ target: RECIPIENT, callData: '0x', gasLimit: '18446744073709551615' }],
      },
      partnerFee: { volumeBps: 25, recipient: RECIPIENT },
      enableFastPath: true,
      validFrom: 1_700_000_000,
      quote: { slippageBips: 50 },
    });
    const doc = parseAppDataDocument(text);
    assert.equal(doc.hash, appDataHash(text));
    assert.deepEqual(doc.protocol, {
      replacedOrderUid: UID_VECTOR.uid,
      signer: RECIPIENT.toLowerCase(),
      hooks: {
        pre: [{ target: TARGET, callData: '0xabcd', gasLimit: 21000n, dappId: 'x' }],
        post: [{ target: RECIPIENT.toLowerCase(), callData: '0x', gasLimit: 2n ** 64n - 1n, dappId: null }],
      },
      partnerFees: [{ kind: 'volume', bps: 25, recipient: RECIPIENT.toLowerCase() }],
      enableFastPath: true,
      validFrom: 1_700_000_000,
    });
    assert.deepEqual((doc.json as { metadata: { quote: unknown } }).metadata.quote, { slippageBips: 50 });
  });

  it('normalises every partnerFee shape to a list', () => {
    const recipient = RECIPIENT.toLowerCase();
    const doc = parseAppDataDocument(
      withMetadata({
        partnerFee: [
          { bps: 10, recipient: RECIPIENT },
          { surplusBps: 50, maxVolumeBps: 100, recipient: RECIPIENT },
          { priceImprovementBps: 30, maxVolumeBps: 90, recipient: RECIPIENT },
        ],
      }),
    );
    assert.deepEqual(doc.protocol.partnerFees, [
      { kind: 'volume', bps: 10, recipient },
      { kind: 'surplus', bps: 50, maxVolumeBps: 100, recipient },
      { kind: 'priceImprovement', bps: 30, maxVolumeBps: 90, recipient },
    ]);
  });

  it('falls back to legacy backend.hooks only when metadata.hooks is absent', () => {
    const legacy = { hooks: { pre: [{ target: TARGET, callData: '0x01', gasLimit: '1' }] } };
    assert.equal(parseAppDataDocument(JSON.stringify({ backend: legacy })).protocol.hooks.pre.length, 1);
    const both = JSON.stringify({ backend: legacy, metadata: { hooks: { post: [] } } });
    assert.deepEqual(parseAppDataDocument(both).protocol.hooks, { pre: [], post: [] });
  });

  it('treats null like an absent key', () => {
    const doc = parseAppDataDocument(withMetadata({ signer: null, hooks: null, partnerFee: null, validFrom: null, enableFastPath: null }));
    assert.equal(doc.protocol.signer, null);
    assert.equal(doc.protocol.validFrom, null);
  });

  it('enforces the 8192-byte limit on UTF-8 bytes', () => {
    const pad = (bytes: number) => `{"a":"${'x'.repeat(bytes - 8)}"}`;
    assert.equal(MAX_APP_DATA_BYTES, 8192);
    assert.equal(parseAppDataDocument(pad(8192)).byteLength, 8192);
    assert.throws(() => parseAppDataDocument(pad(8193)), fieldError(null, 'tooLarge'));
    // 4000 two-byte characters: 4000 UTF-16 units but 8000 + 8 bytes — under; 4100 → over.
    assert.doesNotThrow(() => parseAppDataDocument(`{"a":"${'é'.repeat(4000)}"}`));
    assert.throws(() => parseAppDataDocument(`{"a":"${'é'.repeat(4100)}"}`), fieldError(null, 'tooLarge'));
  });

  it('rejects lone surrogates, invalid JSON and non-objects', () => {
    assert.throws(() => parseAppDataDocument('{"a":"\ud800"}'), fieldError(null, 'invalidUtf8'));
    assert.doesNotThrow(() => parseAppDataDocument('{"a":"\ud83d\udc2e"}'));
    for (const text of ['', '{', '{"a":1,}', "{'a':1}"]) {
      assert.throws(() => parseAppDataDocument(text), fieldError(null, 'invalidJson'), text);
    }
    for (const text of ['[]', 'null', '"{}"', '1', 'true']) {
      assert.throws(() => parseAppDataDocument(text), fieldError(null, 'notAnObject'), text);
    }
  });

  it('names the offending field', () => {
    const cases: Array<[unknown, string]> = [
      ['not-an-object', 'metadata'],
      [{ replacedOrder: 'x' }, 'metadata.replacedOrder'],
      [{ replacedOrder: { uid: '0x1234' } }, 'metadata.replacedOrder.uid'],
      [{ replacedOrder: {} }, 'metadata.replacedOrder.uid'],
      [{ signer: '0x123' }, 'metadata.signer'],
      [{ signer: 'b6bad41ae76a11d10f7b0e664c5007b908bc77c9' }, 'metadata.signer'],
      [{ hooks: [] }, 'metadata.hooks'],
      [{ hooks: { pre: {} } }, 'metadata.hooks.pre'],
      [{ hooks: { post: [1] } }, 'metadata.hooks.post[0]'],
      [{ hooks: { pre: [{ target: 'x', callData: '0x', gasLimit: '1' }] } }, 'metadata.hooks.pre[0].target'],
      [{ hooks: { pre: [{ target: TARGET, callData: '0x1', gasLimit: '1' }] } }, 'metadata.hooks.pre[0].callData'],
      [{ hooks: { pre: [{ target: TARGET, callData: '0x', gasLimit: 21000 }] } }, 'metadata.hooks.pre[0].gasLimit'],
      [{ hooks: { pre: [{ target: TARGET, callData: '0x', gasLimit: '18446744073709551616' }] } }, 'metadata.hooks.pre[0].gasLimit'],
      [{ hooks: { pre: [{ target: TARGET, callData: '0x', gasLimit: '-1' }] } }, 'metadata.hooks.pre[0].gasLimit'],
      [{ partnerFee: 5 }, 'metadata.partnerFee'],
      [{ partnerFee: { recipient: RECIPIENT } }, 'metadata.partnerFee'],
      [{ partnerFee: { volumeBps: 1, surplusBps: 1, recipient: RECIPIENT } }, 'metadata.partnerFee'],
      [{ partnerFee: { volumeBps: 10001, recipient: RECIPIENT } }, 'metadata.partnerFee.volumeBps'],
      [{ partnerFee: { volumeBps: 1.5, recipient: RECIPIENT } }, 'metadata.partnerFee.volumeBps'],
      [{ partnerFee: { volumeBps: 1, recipient: '0x' } }, 'metadata.partnerFee.recipient'],
      [{ partnerFee: [{ surplusBps: 1, recipient: RECIPIENT }] }, 'metadata.partnerFee[0].maxVolumeBps'],
      [{ enableFastPath: 'true' }, 'metadata.enableFastPath'],
      [{ validFrom: '1700000000' }, 'metadata.validFrom'],
      [{ validFrom: -1 }, 'metadata.validFrom'],
      [{ validFrom: 2 ** 32 }, 'metadata.validFrom'],
    ];
    for (const [metadata, field] of cases) {
      assert.throws(() => parseAppDataDocument(withMetadata(metadata)), fieldError(field), `${field}: ${JSON.stringify(metadata)}`);
    }
  });
});
