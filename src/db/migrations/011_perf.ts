/**
 * Issue 15, point 7: the current auction is stored as the JSON text the API serves (`text`, not `jsonb`): it is
 * written once per block and only ever read back whole, so parsing 10 000 orders into jsonb on every write (and
 * printing them back on every read) bought nothing.
 */
export const statements: string[] = [`alter table auctions alter column auction type text using auction::text`];
