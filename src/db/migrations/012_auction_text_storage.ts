/**
 * Issue 15, point 7: the current auction's JSON text (8 MB for 10 000 orders) is stored uncompressed, out of line
 * (`storage external`). It is written once per block and read back whole; pglz compressing it on every write
 * (in PGlite's WASM, on the auction loop's thread) cost more than a third of storing it, for a row that is
 * replaced one block later. New rows only: the stored one is replaced by the next auction.
 */
export const statements: string[] = [`alter table auctions alter column auction set storage external`];
