import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { startTestApp } from './test/fixtures/app.ts';
import { intake } from './bench/orderbook.ts';
const app = await startTestApp();
await intake(app); // warm-up
const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.start');
const r = await intake(app);
const { profile } = await s.post('Profiler.stop');
writeFileSync('/tmp/intake.cpuprofile', JSON.stringify(profile));
console.log(r);
await app.stop(); process.exit(0);
