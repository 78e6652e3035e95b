import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getAddress } from 'viem';
import { NETWORKS, networkByChainId, networkByName, parseChainParam } from './networks.js';

const EXPECTED_IDS: Record<string, number> = {
  mainnet: 1,
  xdai: 100,
  arbitrum_one: 42161,
  base: 8453,
  avalanche: 43114,
  polygon: 137,
  lens: 232,
  bnb: 56,
  linea: 59144,
  plasma: 9745,
  ink: 57073,
  sepolia: 11155111,
  devnet: 31337,
};

/** Checksummed forms from the brief/reference: checks both the value and its checksum. */
const WRAPPED: Record<string, string | null> = {
  mainnet: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  xdai: '0xe91D153E0b41518A2Ce8Dd3D7944Fa863463a97d',
  arbitrum_one: '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1',
  base: '0x4200000000000000000000000000000000000006',
  avalanche: '0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7',
  polygon: '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270',
  bnb: '0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c',
  linea: '0xe5D7C2a44FfDDf6b295A15c148167daaAf5Cf34f',
  sepolia: '0xfFf9976782d46CC05630D1f6eBAb18b2324d6B14',
  devnet: null,
};

describe('networks', () => {
  it('lists the twelve order-book networks plus devnet with the right chain ids, uniquely', () => {
    assert.deepEqual(Object.fromEntries(NETWORKS.map((n) => [n.name, n.chainId])), EXPECTED_IDS);
    assert.equal(new Set(NETWORKS.map((n) => n.chainId)).size, NETWORKS.length);
  });

  it('uses the canonical settlement and vault relayer everywhere', () => {
    for (const network of NETWORKS) {
      assert.equal(getAddress(network.settlement), '0x9008D19f58AAbD9eD0D60971565AA8510560ab41', network.name);
      assert.equal(getAddress(network.vaultRelayer), '0xC92E8bdf79f0507f65a392b0ab4667716BFE0110', network.name);
    }
  });

  it('has the known wrapped native tokens, lowercase', () => {
    for (const [name, expected] of Object.entries(WRAPPED)) {
      const actual = networkByName(name)?.wrappedNativeToken;
      if (expected === null) assert.equal(actual, null, name);
      else assert.equal(actual && getAddress(actual), expected, name);
    }
    for (const network of NETWORKS) {
      if (network.wrappedNativeToken !== null) assert.equal(network.wrappedNativeToken, network.wrappedNativeToken.toLowerCase());
      assert.ok(network.nativeCurrency.symbol.length > 0 && network.nativeCurrency.decimals === 18, network.name);
    }
    assert.equal(networkByName('xdai')?.nativeCurrency.symbol, 'xDAI');
    assert.equal(networkByName('polygon')?.nativeCurrency.symbol, 'POL');
  });

  it('looks networks up by name and chain id', () => {
    assert.equal(networkByName('arbitrum_one')?.chainId, 42161);
    assert.equal(networkByName('gnosis'), undefined);
    assert.equal(networkByChainId(8453)?.name, 'base');
    assert.equal(networkByChainId(5), undefined);
  });

  it('parseChainParam accepts a decimal id, a number or a name', () => {
    assert.equal(parseChainParam('100')?.name, 'xdai');
    assert.equal(parseChainParam(11155111)?.name, 'sepolia');
    assert.equal(parseChainParam('mainnet')?.chainId, 1);
    assert.equal(parseChainParam('Mainnet')?.chainId, 1);
    assert.equal(parseChainParam('31337')?.name, 'devnet');
    for (const bad of ['', '01', '+1', '1.0', '0x1', ' 1', '-1', '999', 'eth', 1.5, NaN]) {
      assert.equal(parseChainParam(bad), undefined, String(bad));
    }
  });
});
