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


