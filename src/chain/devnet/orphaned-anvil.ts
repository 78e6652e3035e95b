/**
 * The anvil a killed node leaves behind. anvil runs in its own process group (so that Ctrl-C reaches node, which
 * stops it in order), hence a `kill -9` of node leaves it running on the devnet port and the next start would
 * fail with "port already in use". Its pid is recorded in a file of the data dir while it runs; the next start
 * finds it there and stops it (SIGTERM: anvil dumps its state, which the restart then loads; SIGKILL after a
 * grace period), unless the pid now belongs to another program. The file names the node that started anvil too:
 * while that node runs, its anvil is not an orphan, and a second node on the same data dir refuses to start.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The file's first line is anvil's pid, the second the pid of the node that started it. */
export function recordAnvilPid(pidFile: string, pid: number): void {
  mkdirSync(dirname(pidFile), { recursive: true });
  writeFileSync(pidFile, `${pid}\n${process.pid}\n`);
}

/** A running node owns the data dir's anvil. */
export class DevnetInUseError extends Error {
  constructor(
    readonly anvilPid: number,
    readonly ownerPid: number,
  ) {
    super(`devnet: the data dir's anvil (pid ${anvilPid}) belongs to a running node (pid ${ownerPid}); stop that node first, or give this one another DATA_DIR`);
    this.name = 'DevnetInUseError';
  }
}

/** Removes the pid file if it still names `pid` (a newer anvil may have replaced it). */
export function forgetAnvilPid(pidFile: string, pid: number | undefined): void {
  if (readPids(pidFile)?.anvil === pid) rmSync(pidFile, { force: true });
}

/** anvil's pid and its node's (null in a file of an older version), or null without a readable file. */
export function readPids(pidFile: string): { anvil: number; owner: number | null } | null {
  let lines: string[];
  try {
    lines = readFileSync(pidFile, 'utf8').trim().split(/\s+/);
  } catch {
    return null;
  }
  const [anvil, owner] = lines.map((l) => Number.parseInt(l, 10));
  if (!Number.isInteger(anvil) || anvil! <= 0) return null;
  return { anvil: anvil!, owner: Number.isInteger(owner) && owner! > 0 ? owner! : null };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the process is an anvil (Linux: its command line; elsewhere the pid file is trusted). */
function isAnvil(pid: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /(^|[/\\])anvil(\.exe)?\0/.test(cmdline);
  } catch {
    return process.platform !== 'linux';
  }
}

async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

/**
 * Stops the anvil named by `pidFile` if it is still running and the node that started it is gone; returns its pid
 * when it did, else null. SIGTERM first (anvil writes its `--state` file on the way out), SIGKILL after `graceMs`.
 * Throws DevnetInUseError, touching nothing, while another running process started it.
 */
export async function stopOrphanedAnvil(pidFile: string, graceMs = 10_000): Promise<number | null> {
  const pids = readPids(pidFile);
  if (pids === null) return null;
  const pid = pids.anvil;
  if (pids.owner !== null && pids.owner !== process.pid && alive(pids.owner) && alive(pid) && isAnvil(pid)) throw new DevnetInUseError(pid, pids.owner);
  try {
    if (!alive(pid) || !isAnvil(pid)) return null;
    process.kill(pid, 'SIGTERM');
    if (!(await exitedWithin(pid, graceMs))) {
      process.kill(pid, 'SIGKILL');
      await exitedWithin(pid, 5_000);
    }
    return pid;
  } finally {
    rmSync(pidFile, { force: true });
  }
}
