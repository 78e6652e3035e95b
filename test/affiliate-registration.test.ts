/**
 * Affiliate registration on the real devnet (issue 10 §2): an EOA (the demo trader), an ERC-1271 smart wallet
 * (the devnet's demo wallet) and an ERC-6492 counterfactual wallet (a CREATE2 factory deployed here) register
 * codes; every error row; the 20-way race on one code; `/ref-codes/{code}`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, http, serializeErc6492Signature, encodeFunctionData, type Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { affiliateTypedData } from '../src/aux/affiliate/affiliate-code.js';

const DOMAIN = 'CoW Swap Affiliate';
const artifact = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/artifacts/${name}.json`, import.meta.url), 'utf8')) as { abi: Abi; bytecode: Hex };

const sign = (account: PrivateKeyAccount, wallet: Address, code: string, domain = DOMAIN): Promise<Hex> => account.signTypedData(affiliateTypedData(domain, wallet, code));

describe('affiliate registration on the devnet', () => {
  let app: TestApp;
  let trader: PrivateKeyAccount;
  let smartWallet: Address;

  before(async () => {
    app = await startTestApp();
    const d = app.devnet!.describe();
    trader = privateKeyToAccount(d.accounts.find((a) => a.role === 'trader')!.privateKey);
    smartWallet = d.contracts.smartWallet as Address;
  });
  after(async () => {
    await app?.stop();
  });

  const register = (address: string, body: unknown) => call(app.baseUrl, 'POST', `/affiliate/${address}`, body);

  it('registers an EOA: 201 {code, createdAt}, the code normalised; GET answers the same createdAt and the terms', async () => {
    const res = await register(trader.address, { walletAddress: trader.address.toLowerCase(), code: '  eoa-code ', signedMessage: await sign(trader, trader.address, 'EOA-CODE') });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.code, 'EOA-CODE');
    const got = await call(app.baseUrl, 'GET', `/affiliate/${trader.address.toLowerCase()}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, {
      code: 'EOA-CODE', createdAt: res.body.createdAt, rewardAmount: 20, triggerVolume: 250000, timeCapDays: 90, volumeCap: 2500000,
      revenueSplitAffiliatePct: 50, revenueSplitTraderPct: 50, revenueSplitDaoPct: 0,
    });
    const ref = await call(app.baseUrl, 'GET', '/ref-codes/eoa-code');
    assert.deepEqual([ref.status, ref.body], [200, { code: 'EOA-CODE', traderRewardAmount: 10, triggerVolume: 250000, timeCapDays: 90, volumeCap: 2500000 }]);
  });

  it('registers the demo smart wallet (ERC-1271: its owner signs)', async () => {
    const res = await register(smartWallet, { walletAddress: smartWallet, code: 'SMART_1271', signedMessage: await sign(trader, smartWallet, 'SMART_1271') });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((await call(app.baseUrl, 'GET', `/affiliate/${smartWallet}`)).body.code, 'SMART_1271');
  });

  it('registers a counterfactual wallet (ERC-6492) that is not deployed yet', async () => {
    const d = app.devnet!.describe();
    const deployer = privateKeyToAccount(d.accounts.find((a) => a.role === 'deployer')!.privateKey);
    const transport = http(app.devnet!.rpcUrl);
    const wallet = createWalletClient({ account: deployer, transport, chain: { id: 31337 } as never });
    const client = createPublicClient({ transport });
    const factoryArtifact = artifact('CounterfactualWalletFactory');
    const hash = await wallet.deployContract({ abi: factoryArtifact.abi, bytecode: factoryArtifact.bytecode, chain: null });
    const factory = (await client.waitForTransactionReceipt({ hash })).contractAddress!;
    const owner = privateKeyToAccount(generatePrivateKey());
    const counterfactual = (await client.readContract({ address: factory, abi: factoryArtifact.abi, functionName: 'addressOf', args: [owner.address] })) as Address;
    assert.equal(await client.getCode({ address: counterfactual }), undefined, 'not deployed');
    const inner = await sign(owner, counterfactual, 'LATER-6492');
    const signature = serializeErc6492Signature({ address: factory, data: encodeFunctionData({ abi: factoryArtifact.abi, functionName: 'deploy', args: [owner.address] }), signature: inner });
    // the inner signature alone does not verify (no contract there yet, and it is not the owner's EOA address)
    assert.equal((await register(counterfactual, { walletAddress: counterfactual, code: 'LATER-6492', signedMessage: inner })).status, 401);
    // the same wrapper with 2 kB of factory calldata (the factory ignores the trailing bytes, so it would verify) is
    // refused before any chain runs it: anonymous callers cannot make the node execute large factory calls
    const deployData = encodeFunctionData({ abi: factoryArtifact.abi, functionName: 'deploy', args: [owner.address] });
    const bloated = serializeErc6492Signature({ address: factory, data: `${deployData}${'00'.repeat(2048)}`, signature: inner });
    const refused = await register(counterfactual, { walletAddress: counterfactual, code: 'LATER-6492', signedMessage: bloated });
    assert.deepEqual([refused.status, refused.body], [401, { message: 'Affiliate has invalid signature: signedMessage does not verify for walletAddress' }]);
    const res = await register(counterfactual, { walletAddress: counterfactual, code: 'later-6492', signedMessage: signature });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(await client.getCode({ address: counterfactual }), undefined, 'verification does not deploy it');
  });

  it('answers every error row with {message} and its status', async () => {
    const someone = privateKeyToAccount(generatePrivateKey());
    const good = async (code: string) => ({ walletAddress: someone.address, code, signedMessage: await sign(someone, someone.address, code.trim().toUpperCase()) });
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ['extra property', someone.address, { ...(await good('EXTRA-1')), extra: 1 }, 400, /extra|additional/i],
      ['missing signedMessage', someone.address, { walletAddress: someone.address, code: 'NOSIG-1' }, 400, /signedMessage/],
      ['non-hex signature', someone.address, { ...(await good('HEX-01')), signedMessage: 'not hex' }, 400, /signedMessage/],
      ['malformed address', '0x1234', await good('ADDR-1'), 400, /address/],
      ['code too short', someone.address, await good('ab12'), 400, /code format/],
      ['code too long', someone.address, { ...(await good('A'.repeat(20))), code: 'A'.repeat(21) }, 400, /code format/],
      ['code with a bad character', someone.address, await good('BAD.CODE'), 400, /code format/],
      ['address mismatch', trader.address, await good('MISMATCH'), 400, /mismatch/],
      ['garbage hex signature', someone.address, { ...(await good('GARBAGE')), signedMessage: '0xdeadbeef' }, 401, /signature/],
      ['signature of another code', someone.address, { ...(await good('OTHER-1')), code: 'OTHER-2' }, 401, /signature/],
      ['another domain name', someone.address, { walletAddress: someone.address, code: 'DOMAIN-1', signedMessage: await sign(someone, someone.address, 'DOMAIN-1', 'Other Affiliate') }, 401, /signature/],
      ['signed by someone else', someone.address, { walletAddress: someone.address, code: 'THIEF-1', signedMessage: await sign(trader, someone.address, 'THIEF-1') }, 401, /signature/],
      ['code taken (any case)', someone.address, await good('eoa-code'), 409, /already taken/],
      ['wallet with a code', trader.address, { walletAddress: trader.address, code: 'SECOND', signedMessage: await sign(trader, trader.address, 'SECOND') }, 409, /already bound/],
    ];
    for (const [name, address, body, status, message] of cases) {
      const res = await register(address, body);
      assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(Object.keys(res.body), ['message'], name);
      assert.match(res.body.message, message, name);
    }
    const malformed = await fetch(`${app.baseUrl}/affiliate/${someone.address}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"code":' });
    assert.equal(malformed.status, 400);
    for (const [path, status] of [
      [`/affiliate/${someone.address}`, 404],
      [`/affiliate/affiliate-stats/${someone.address}`, 404],
      [`/affiliate/trader-stats/${someone.address}`, 404],
      ['/affiliate/0x12', 400],
      ['/ref-codes/NOPE-NOPE', 404],
      ['/ref-codes/no', 400],
    ] as const) {
      const res = await call(app.baseUrl, 'GET', path);
      assert.equal(res.status, status, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(typeof res.body.message, 'string', path);
    }
  });

  it('20 concurrent registrations of one code by 20 wallets: exactly one 201 and nineteen 409', async () => {
    const wallets = Array.from({ length: 20 }, () => privateKeyToAccount(generatePrivateKey()));
    const bodies = await Promise.all(wallets.map(async (w) => ({ walletAddress: w.address, code: 'RACE-CODE', signedMessage: await sign(w, w.address, 'RACE-CODE') })));
    const results = await Promise.all(bodies.map((b) => register(b.walletAddress, b)));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, ...Array(19).fill(409)], JSON.stringify(results.map((r) => r.body)));
    const winner = wallets[results.findIndex((r) => r.status === 201)]!;
    assert.equal((await call(app.baseUrl, 'GET', `/affiliate/${winner.address}`)).body.code, 'RACE-CODE');
  });
});
