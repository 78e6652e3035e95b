// Operator command of the affiliate program (issue 10): records payouts and lists them.
//
//   npm run affiliate -- payout <affiliateOrTraderAddress> <usd> [--note <text>] [--as affiliate|trader] [--force]
//   npm run affiliate -- list [<address>]
//
// `payout` records what was paid to an affiliate (the wallet owns a code) or a referred trader (the wallet is
// bound to a code); `--as` decides when the wallet is both. It refuses an amount above what is owed (the
// statistics' next_payout) unless `--force`. Uses the node's database (DATABASE_URL, else the PGlite in
// DATA_DIR: embedded PGlite is single-process, so run it while the node is stopped).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import { loadConfigOrExit } from '../src/config/config.js';
import { openDatabase } from '../src/db/connection.js';
import { toBytes, toHex } from '../src/db/codec.js';
import type { DB } from '../src/db/schema.js';
import { ComputedAffiliateStats } from '../src/aux/affiliate/computed-stats.js';

export interface CommandContext {
  db: Kysely<DB>;
  print: (line: string) => void;
}

export class UsageError extends Error {}

const USAGE = 'usage: npm run affiliate -- payout <address> <usd> [--note <text>] [--as affiliate|trader] [--force] | list [<address>]';

function option(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  if (i === -1) return null;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
  args.splice(i, 2);
  return value;
}

function parseAddress(value: string | undefined): Address {
  if (!value || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw new UsageError(`expected a 0x address, got '${value ?? ''}'`);
  return value.toLowerCase() as Address;
}

async function payout(args: string[], ctx: CommandContext): Promise<void> {
  const note = option(args, '--note');
  const as = option(args, '--as');
  const force = args.includes('--force');
  const [addressArg, amountArg] = args.filter((a) => a !== '--force');
  const address = parseAddress(addressArg);
  if (!amountArg || !/^\d+(\.\d{1,6})?$/.test(amountArg) || Number(amountArg) <= 0) throw new UsageError(`expected a positive USD amount (up to 6 decimals), got '${amountArg ?? ''}'`);
  const usd = Number(amountArg);
  if (as !== null && as !== 'affiliate' && as !== 'trader') throw new UsageError(`--as must be affiliate or trader, got '${as}'`);
  const stats = new ComputedAffiliateStats(ctx.db);
  const [asAffiliate, asTrader] = await Promise.all([stats.affiliateStats(address), stats.traderStats(address)]);
  const roles = [asAffiliate ? 'affiliate' : null, asTrader ? 'trader' : null].filter((r): r is 'affiliate' | 'trader' => r !== null);
  if (roles.length === 0) throw new UsageError(`${address} has no affiliate code and is not bound to one`);
  const role = as ?? (roles.length === 1 ? roles[0]! : null);
  if (role === null) throw new UsageError(`${address} is both an affiliate and a referred trader: add --as affiliate or --as trader`);
  if (!roles.includes(role as 'affiliate' | 'trader')) throw new UsageError(`${address} is not a referred ${role === 'trader' ? 'trader' : 'affiliate'}`);
  const owed = role === 'affiliate' ? asAffiliate!.next_payout : asTrader!.next_payout;
  if (usd > owed + 1e-9 && !force) throw new UsageError(`${usd} USD exceeds what is owed to ${address} as ${role} (${owed} USD); add --force to record it anyway`);
  const row = await ctx.db
    .insertInto('affiliate_payouts')
    .values({ address: toBytes(address), role: role as 'affiliate' | 'trader', usd, note })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
  ctx.print(`payout #${row.id}: ${usd} USD to ${address} as ${role}${note ? ` (${note})` : ''}; still owed ${Math.max(0, Math.round((owed - usd) * 1e6) / 1e6)} USD`);
}

async function list(args: string[], ctx: CommandContext): Promise<void> {
  let query = ctx.db.selectFrom('affiliate_payouts').selectAll().orderBy('id', 'desc').limit(1000);
  if (args[0] !== undefined) query = query.where('address', '=', toBytes(parseAddress(args[0])));
  const rows = await query.execute();
  if (rows.length === 0) ctx.print('no payouts');
  for (const r of rows) ctx.print(`#${r.id}\t${new Date(r.created_at).toISOString()}\t${toHex(r.address)}\t${r.role}\t${r.usd} USD${r.note ? `\t${r.note}` : ''}`);
}

/** Runs one command; rejects with UsageError on bad arguments or a refused payout. */
export async function runAffiliateCommand(argv: string[], ctx: CommandContext): Promise<void> {
  const [command, ...args] = argv;
  if (command === 'payout') return payout([...args], ctx);
  if (command === 'list') return list([...args], ctx);
  throw new UsageError(USAGE);
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const database = await openDatabase(config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: join(config.dataDir, 'pglite') });
  try {
    await runAffiliateCommand(process.argv.slice(2), { db: database.db, print: (l) => process.stdout.write(`${l}\n`) });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 1;
  } finally {
    await database.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
