import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak256, stringToHex } from 'viem';
import { BARN_SETTLEMENT_ADDRESS, SETTLEMENT_ADDRESS } from './contract-addresses.js';
import { DOMAIN_NAME, DOMAIN_VERSION, EIP712_DOMAIN_TYPE_HASH, domainSeparator, orderDomain } from './order-domain.js';

describe('order EIP-712 domain (§6.1)', () => {
  it('domain type hash is keccak of the EIP712Domain type string', () => {
    const computed = keccak256(stringToHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'));
    assert.equal(computed, '0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f');
    assert.equal(EIP712_DOMAIN_TYPE_HASH, computed);
  });

  it('name and version hash to the reference values', () => {
    assert.equal(keccak256(stringToHex(DOMAIN_NAME)), '0x6c85c0337eba1661327f94f3bf46c8a7f9311a563f4d5c948362567f5d8ed60c');
    assert.equal(keccak256(stringToHex(DOMAIN_VERSION)), '0xf9446b8e937d86f0bc87cac73923491692b123ca5f8761908494703758206adf');
  });

  const separators: Array<[number, string]> = [
    [1, '0xc078f884a2676e1345748b1feace7b0abee5d00ecadb6e574dcdd109a63e8943'],
    [100, '0x8f05589c4b810bc2f706854508d66d447cd971f8354a4bb0b3471ceb0a466bc7'],
    [42161, '0x69d78e7a7cafcaf924483f99f65e8f4e303a99a446db7ab319f9d40e940bced2'],
    [8453, '0xd72ffa789b6fae41254d0b5a13e6e1e92ed947ec6a251edf1cf0b6c02c257b4b'],
    [11155111, '0xdaee378bd0eb30ddf479272accf91761e697bc00e067a268f95f1d2732ed230b'],
    [31337, '0x28dc932d67cd79da82085f7fbb19d7c88f84894397b07917354176f60f0096d4'],
  ];
  for (const [chainId, expected] of separators) {
    it(`domain separator of chain ${chainId}`, () => {
      assert.equal(domainSeparator(chainId), expected);
      assert.equal(domainSeparator(orderDomain(chainId)), expected);
      assert.equal(domainSeparator(orderDomain(chainId, '0x9008D19f58AAbD9eD0D60971565AA8510560ab41')), expected);
    });
  }

  it('barn settlement gives the staging separators', () => {
    assert.equal(domainSeparator(1, BARN_SETTLEMENT_ADDRESS), '0x0960f2d0acd976dfedd55faa7e70faa7a0d9733388dc151ad1df89b31016b646');
    assert.equal(domainSeparator(11155111, BARN_SETTLEMENT_ADDRESS), '0xd6c51a6fe1ceca6e15b728f4782ac1f7b56ad8df5e4c9058a8348c5899d9ff5d');
  });

  it('orderDomain defaults to the canonical settlement and the fixed name/version', () => {
    assert.deepEqual(orderDomain(5), { name: 'Gnosis Protocol', version: 'v2', chainId: 5, verifyingContract: SETTLEMENT_ADDRESS });
    assert.equal(SETTLEMENT_ADDRESS, '0x9008D19f58AAbD9eD0D60971565AA8510560ab41'.toLowerCase());
  });
});
