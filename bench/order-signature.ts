/**
 * Order-signature throughput: (a) EIP-712 order digest + signer recovery with the protocol core, per
 * second, against (b) raw viem `recoverAddress` on a precomputed hash, per second — same orders, same
 * signatures, same run, in alternating slices (~1.5 s per side). The domain separator is precomputed once per
 * network, as the service does. No assertions: the figure is reported, not judged.
 */
import { performance } from 'node:perf_hooks';
import { recoverAddress, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import type { Figure } from './figure.js';
import { domainSeparator, orderDigest, recoverOrderSigner, type Order } from '../src/protocol/index.js';

const DURATION_MS = 1500;
const WARMUP_MS = 200;
const SLICES = 6;
const SAMPLE_COUNT = 32;
/** anvil/Hardhat dev account 1 (public key material). */
const PRIVATE_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

interface Sample {
  readonly order: Order;
  readonly digest: Hex;
  readonly signature: Hex;
}

async function buildSamples(separator: Hex): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (let i = 0; i < SAMPLE_COUNT; i++) {
    const order: Order = {
      sellToken: '0x0101010101010101010101010101010101010101',
      buyToken: '0x0202020202020202020202020202020202020202',
      receiver: null,
      sellAmount: 10n ** 18n + BigInt(i),
      buyAmount: 2n * 10n ** 18n,
      validTo: 0xffffffff,
      appData: '0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d',
      feeAmount: 0n,
      kind: 'sell',
      partiallyFillable: false,
      sellTokenBalance: 'erc20',
      buyTokenBalance: 'erc20',
    };
    const digest = orderDigest(order, separator);
    samples.push({ order, digest, signature: await sign({ hash: digest, privateKey: PRIVATE_KEY, to: 'hex' }) });
  }
  return samples;
}

interface Tally {
  count: number;
  ms: number;
}

/** Runs `step` over the samples round-robin for `ms` milliseconds, adding to `tally`. */
async function timeBoxed(ms: number, samples: readonly Sample[], step: (sample: Sample) => Promise<unknown>, tally: Tally): Promise<void> {
  const start = performance.now();
  let count = 0;
  let elapsed = 0;
  while ((elapsed = performance.now() - start) < ms) {
    await step(samples[(tally.count + count) % samples.length]!);
    count++;
  }
  tally.count += count;
  tally.ms += elapsed;
}

export async function benchOrderSignature(): Promise<Figure> {
  const separator = domainSeparator(31337);
  const samples = await buildSamples(separator);

  const ours = (sample: Sample) =>
    recoverOrderSigner({ scheme: 'eip712', signature: sample.signature, digest: orderDigest(sample.order, separator) });
  const raw = (sample: Sample) => recoverAddress({ hash: sample.digest, signature: sample.signature });

  await timeBoxed(WARMUP_MS, samples, ours, { count: 0, ms: 0 });
  await timeBoxed(WARMUP_MS, samples, raw, { count: 0, ms: 0 });
  // Alternate short slices so drift (JIT, GC, CPU frequency) hits both sides alike; ~1.5 s each in total.
  const oursTally: Tally = { count: 0, ms: 0 };
  const rawTally: Tally = { count: 0, ms: 0 };
  for (let slice = 0; slice < SLICES; slice++) {
    await timeBoxed(DURATION_MS / SLICES, samples, ours, oursTally);
    await timeBoxed(DURATION_MS / SLICES, samples, raw, rawTally);
  }
  const value = oursTally.count / (oursTally.ms / 1000);
  const baseline = rawTally.count / (rawTally.ms / 1000);

  return {
    name: 'order-signature',
    value,
    unit: 'orders/s (digest + recover)',
    baseline,
    baselineUnit: 'recoveries/s (viem recoverAddress, precomputed hash)',
    ratio: value / baseline,
    note: 'EIP-712 order digest + signer recovery vs raw recovery; higher ratio is better (≤ 1 expected)',
  };
}
