/**
 * Issue 24, §3 (auction build ≤ 1.2 × a plain SELECT): the current auction is stored gzip-compressed
 * (`auction_gzip`, ~20 times smaller than its 8 MB of JSON text for 10 000 orders). Compressing runs on libuv's
 * thread pool (level 1: ~25 ms), off the loop that PGlite's WASM runs on, and the row written is a twentieth of
 * the text; GET /api/v1/auction sends the stored bytes as they are to a client that accepts gzip. The text
 * column stays for a row written before this migration (read while it is the current one; the next auction
 * replaces it).
 */
export const statements: string[] = [
  `alter table auctions alter column auction drop not null`,
  `alter table auctions add column auction_gzip bytea`,
  `alter table auctions alter column auction_gzip set storage external`,
];
