#!/usr/bin/env node
// `npm run test:consumer`: the testing kit as its users get it. Packs this project, installs the tarball into a
// fresh temporary project with vitest, the official SDK and TypeScript from the npm registry (reusing npm's cache:
// --prefer-offline), type-checks a consumer file under moduleResolution NodeNext, runs four vitest files in
// parallel (--pool=forks), each starting its own instance and settling an order through the SDK, then starts
// `npx batchbook` and stops it with Ctrl-C (SIGINT); after each, nothing of the project may be left running.
// Prints the figures (pack, install, type check, the four-file run's wall time, npx batchbook → ready).
// Exits non-zero on the first failure. Usage: npm run test:consumer [-- --keep] (--keep leaves the project).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './build-fingerprint.mjs';

const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'batchbook-consumer-'));
const project = join(work, 'project');
const figures = [];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function step(name, fn) {
  const started = Date.now();
  process.stderr.write(`consumer: ${name}...\n`);
  const result = fn();
  const seconds = (Date.now() - started) / 1000;
  figures.push([name, seconds]);
  return result;
}

async function stepAsync(name, fn) {
  const started = Date.now();
  process.stderr.write(`consumer: ${name}...\n`);
  const result = await fn();
  figures.push([name, (Date.now() - started) / 1000]);
  return result;
}

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, CI: 'true' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
}

/** processes whose command line names the project (its node_modules: the nodes, anvil) */
function leftovers() {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(project) && !l.includes('ps -eo'));
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(what, probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function noLeftovers(when) {
  // what was started exits by itself within seconds; wait for that, then require it
  await waitFor(`no process of the project left ${when}`, () => leftovers().length === 0, 30_000).catch(() => {
    throw new Error(`processes left ${when}:\n${leftovers().join('\n')}`);
  });
}

try {
  const tarball = step('npm pack', () => {
    const out = execFileSync(npm, ['pack', '--pack-destination', work, '--json'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const [info] = JSON.parse(out);
    process.stderr.write(`consumer: ${info.filename}: ${(info.size / 1e6).toFixed(2)} MB packed, ${info.entryCount} files\n`);
    return join(work, info.filename);
  });

  rmSync(project, { recursive: true, force: true });
  step('npm install (tarball, vitest, SDK, TypeScript)', () => {
    execFileSync('mkdir', ['-p', join(project, 'test')]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2));
    run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, 'vitest@^4', 'typescript@5.9', '@types/node@^20', '@cowprotocol/cow-sdk@^9.2.6', '@cowprotocol/sdk-viem-adapter@^0.3.17', 'viem@2.57'], project);
  });
  if (readdirSync(join(project, 'node_modules')).includes('tsx')) throw new Error('tsx was installed: the package must not need it');

  step('type check (NodeNext)', () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] }, include: ['consumer.ts', 'test/**/*.ts'] }, null, 2),
    );
    copyFileSync(join(root, 'test', 'consumer', 'consumer.ts'), join(project, 'consumer.ts'));
    for (let i = 1; i <= 4; i++) copyFileSync(join(root, 'test', 'consumer', 'settle.spec.ts'), join(project, 'test', `settle-${i}.test.ts`));
    run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], project);
  });

  step('vitest: four files in parallel (--pool=forks), each its own instance settling an order', () => {
    run(process.execPath, [join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--pool=forks', '--maxWorkers=4', '--fileParallelism'], project);
  });
  await noLeftovers('after vitest');

  step('npx batchbook prepare (the templates npm start copies)', () => run('npx', ['batchbook', 'prepare'], project));

  await stepAsync('npx batchbook → ready', async () => {
    const [port, devnetPort] = [await freePort(), await freePort()];
    // its own process group, as a terminal's foreground job: Ctrl-C is SIGINT to the whole group
    const child = spawn('npx', ['batchbook'], { cwd: project, detached: true, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DEVNET_PORT: String(devnetPort), LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await waitFor('GET /readyz 200', async () => {
        if (child.exitCode !== null) throw new Error(`npx batchbook exited:\n${out}`);
        return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200;
      }, 600_000);
    } finally {
      figures.push(['  (then Ctrl-C)', 0]);
      process.kill(-child.pid, 'SIGINT');
      await exited;
      await waitFor('the ports to close', async () => !(await fetch(`http://127.0.0.1:${port}/readyz`).then(() => true, () => false)), 30_000);
    }
  });
  await noLeftovers('after Ctrl-C of npx batchbook');

  process.stderr.write(`\nconsumer: all passed\n${figures.map(([n, s]) => `  ${n}: ${s.toFixed(1)} s`).join('\n')}\n`);
} catch (err) {
  process.stderr.write(`\nconsumer: FAILED: ${err.message}\n${figures.map(([n, s]) => `  ${n}: ${s.toFixed(1)} s`).join('\n')}\n`);
  process.exitCode = 1;
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true });
  else process.stderr.write(`consumer: project kept in ${project}\n`);
}
