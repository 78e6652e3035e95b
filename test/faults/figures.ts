/** A figure of a fault suite: a `FAULT-FIGURE name: value` line that `npm run faults` collects into its summary. */
export function figure(name: string, value: unknown): void {
  process.stdout.write(`FAULT-FIGURE ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
}
