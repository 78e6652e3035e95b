/**
 * TypeBox schemas shared by the order-book routes. Formats are checked here (so the error names the field);
 * value rules that have their own errorType (uint256 overflow, expiry, ...) are checked by the services.
 */
import { Type, type TSchema } from '@sinclair/typebox';

export const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x-prefixed 20-byte address, any case' });
export const Hex32 = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: '0x-prefixed 32-byte hash' });
export const OrderUid = Type.String({ pattern: '^0x[0-9a-fA-F]{112}$', description: '0x-prefixed 56-byte order UID' });
export const HexBytes = Type.String({ pattern: '^0x([0-9a-fA-F]{2})*$', description: '0x-prefixed hex bytes' });
/** uint256 as a decimal string: digits only (range checked by the service so overflow gets its own errorType). */
export const DecimalAmount = Type.String({ pattern: '^[0-9]+$', description: 'unsigned integer as a decimal string', examples: ['1000000000000000000'] });
export const SigningScheme = Type.Union([Type.Literal('eip712'), Type.Literal('ethsign'), Type.Literal('presign'), Type.Literal('eip1271')]);
export const EcdsaScheme = Type.Union([Type.Literal('eip712'), Type.Literal('ethsign')]);
export const OrderKind = Type.Union([Type.Literal('sell'), Type.Literal('buy')]);
export const SellTokenBalance = Type.Union([Type.Literal('erc20'), Type.Literal('external'), Type.Literal('internal')]);
export const BuyTokenBalance = Type.Union([Type.Literal('erc20'), Type.Literal('internal')]);

export const ErrorBody = Type.Object(
  { errorType: Type.String(), description: Type.String(), data: Type.Optional(Type.Unknown()) },
  { $id: 'OrderBookError', description: 'Order-book error envelope' },
);

/** Standard error responses for a route, in the order-book envelope. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Object({ errorType: Type.String(), description: Type.String(), data: Type.Optional(Type.Unknown()) });
  return out;
}
