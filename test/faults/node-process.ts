/**
 * The real node as a child process (src/main.ts, the entry `npm start` runs compiled), for the fault suites:
 * start it, wait for its banner, SIGKILL it, restart it on the same DATA_DIR and ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;

export interface NodeProcess {
  child: ChildProcess;
  base: string;
  devnetRpc: string;
  output(): string;
  /** kill -9 (no shutdown of any kind) */
  kill9(): Promise<void>;
  /** SIGTERM, as a clean stop */
  stop(): Promise<number | null>;
}

export async function startNode(env: Record<string, string>, timeoutMs = 240_000): Promise<NodeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const docs = /API docs:\s+(http:\/\/[^\s"]+)\/docs/.exec(out);
    const rpc = /devnet JSON-RPC:\s+(http:\/\/[^\s"]+)/.exec(out);
    if (docs) {
      return {
        child,
        base: docs[1]!,
        devnetRpc: rpc?.[1] ?? '',
        output: () => out,
        async kill9() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
          child.kill('SIGTERM');
          return exited;
        },
      };
    }
    if (child.exitCode !== null) throw new Error(`the node exited during start-up (code ${child.exitCode}):\n${out.slice(-4000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the node did not come up within ${timeoutMs} ms:\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
