#!/usr/bin/env node
// `npm run faults`: the fault suites with real processes — the heavy ones under test/faults/ (*.fault.ts, which
// `npm test` does not pick up) and the quick ones that `npm test` runs too (test/faults-quick.test.ts and the
// providers' fallback tests) — one
// file at a time, then a summary of the figures the suites print (`FAULT-FIGURE name: value` lines).
// Usage: npm run faults [-- <path filter> ...]   FAULT_ORDERS=<n> changes the kill -9 load (default 2000).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const filters = process.argv.slice(2);
// providers.test.ts: provider timeouts and 5xx hand over to the fallback within the outbound timeout, and nothing
// transient is cached as "no data" (a real HTTP server playing each provider)
const files = ['test/faults-quick.test.ts', 'src/providers/providers.test.ts', ...readdirSync('test/faults').filter((f) => f.endsWith('.fault.ts')).sort().map((f) => join('test/faults', f))]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) { console.error('no fault suite matched'); process.exit(1); }

const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files];
const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'test' } });
const figures = [];
let pending = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const m = /FAULT-FIGURE (.+)$/.exec(line);
    if (m) figures.push(m[1]);
  }
});
child.on('exit', (code) => {
  if (figures.length > 0) {
    process.stdout.write('\nfault figures:\n');
    for (const f of figures) process.stdout.write(`  ${f}\n`);
  }
  process.exit(code ?? 1);
});
