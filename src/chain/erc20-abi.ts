// The ERC-20 and EIP-1271 fragments the chain layer reads (full ABIs are not needed for reads).
import { parseAbi } from 'viem';

export const erc20ReadAbi = parseAbi([
  'function balanceOf(address owner) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
  'function name() view returns (string)',
  'function totalSupply() view returns (uint256)',
]);

export const eip1271Abi = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4 magicValue)']);

/** `bytes4(keccak256("isValidSignature(bytes32,bytes)"))`, returned by a contract that accepts the signature. */
export const EIP1271_MAGIC_VALUE = '0x1626ba7e';
