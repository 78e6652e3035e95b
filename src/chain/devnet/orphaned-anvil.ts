/**
 * The anvil a killed node leaves behind. anvil runs in its own process group (so that Ctrl-C reaches node, which
 * stops it in order), hence a `kill -9` of node leaves it running on the devnet port and the next start would
 * fail with "port already in use". Its pid is recorded in a file of the data dir while it runs; the next start
 * finds it there and stops it (SIGTERM: anvil dumps its state, which the restart then loads; SIGKILL after a
 * grace period), unless the pid now belongs to another program.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function recordAnvilPid(pidFile: string, pid: number): void {
  mkdirSync(dirname(pidFile), { recursive: true });
  writeFileSync(pidFile, `${pid}\n`);
}

/** Removes the pid file if it still names `pid` (a newer anvil may have replaced it). */
export function forgetAnvilPid(pidFile: string, pid: number | undefined): void {
  if (readPid(pidFile) === pid) rmSync(pidFile, { force: true });
}

function readPid(pidFile: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
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
 * Stops the anvil named by `pidFile` if it is still running; returns its pid when it did, else null.
 * SIGTERM first (anvil writes its `--state` file on the way out), SIGKILL after `graceMs`.
 */
export async function stopOrphanedAnvil(pidFile: string, graceMs = 10_000): Promise<number | null> {
  const pid = readPid(pidFile);
  if (pid === null) return null;
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
