/**
 * Login timing: does the answer time of POST /dashboard/api/login tell how many staff
 * accounts an e-mail has? E-mails are unique per hotel, so one e-mail may have accounts at
 * several hotels and a login checks the password against each; every answer then waits
 * (a timer, no CPU) until it has taken as long as LOGIN_TIMED_CHECKS checks.
 *
 *   npm run bench:login
 *
 * Four kinds of login, interleaved so a busy moment of the machine hurts each alike:
 * an unknown e-mail (the baseline: one check against a dummy hash), a wrong password for
 * an e-mail with three accounts, a sole account, and the third of three accounts. Prints
 * each kind's median and its ratio to the baseline measured in the same run; a ratio near
 * 1 means the answer time tells nothing. Knob: BENCH_ROUNDS (12).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createHotel, createStaffUser } from '../src/operations.js';
import { startServer } from '../src/server.js';
import { LOGIN_TIMED_CHECKS } from '../src/staff/staff-service.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? '12');
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a positive integer, got "${process.env.BENCH_ROUNDS}"`);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-login-'));
const server = await startServer(
  loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
  pino({ level: 'silent' }),
);
const db = server.database.db;
for (const slug of ['bench-a', 'bench-b', 'bench-c']) await createHotel(db, slug, `Hotel ${slug}`);
// Failed logins are limited per e-mail (5) and per address (20) in 15 minutes: each round
// has an e-mail of three accounts of its own and comes from an address of its own.
for (let r = 0; r < rounds; r++) {
  for (const [i, slug] of ['bench-a', 'bench-b', 'bench-c'].entries())
    await createStaffUser(db, slug, `three-${r}@bench.example`, 'receptionist', `three-password-${i}`);
}
await createStaffUser(db, 'bench-a', 'one@bench.example', 'receptionist', 'sole-lantern-quartz-0');

const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
const agents = Array.from(
  { length: rounds },
  (_, r) => new Agent({ connect: { ca: cert, servername: 'localhost', localAddress: `127.0.${Math.floor(r / 250) + 1}.${(r % 250) + 2}` } }),
);
const base = `https://127.0.0.1:${server.httpsPort}`;

async function timed(agent: Agent, email: string, password: string, expected: number): Promise<number> {
  const started = performance.now();
  const res = await request(`${base}/dashboard/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email, password }),
    dispatcher: agent,
  });
  await res.body.text();
  const ms = performance.now() - started;
  if (res.statusCode !== expected) throw new Error(`login of ${email}: ${res.statusCode}, expected ${expected}`);
  return ms;
}

const kinds = {
  'unknown e-mail (baseline)': [] as number[],
  'wrong password, 3 accounts': [] as number[],
  'sole account': [] as number[],
  'third of 3 accounts': [] as number[],
};
try {
  for (let i = 0; i < rounds; i++) {
    const agent = agents[i] as Agent;
    kinds['unknown e-mail (baseline)'].push(await timed(agent, `nobody-${i}@bench.example`, 'not-the-password', 401));
    kinds['wrong password, 3 accounts'].push(await timed(agent, `three-${i}@bench.example`, 'not-the-password', 401));
    kinds['sole account'].push(await timed(agent, 'one@bench.example', 'sole-lantern-quartz-0', 200));
    kinds['third of 3 accounts'].push(await timed(agent, `three-${i}@bench.example`, 'three-password-2', 200));
  }
} finally {
  await Promise.all(agents.map((a) => a.close()));
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const baseline = median(kinds['unknown e-mail (baseline)']);
console.log(`login timing: ${rounds} rounds, every answer padded to ${LOGIN_TIMED_CHECKS} password checks`);
for (const [kind, xs] of Object.entries(kinds)) {
  console.log(`  ${kind.padEnd(28)} median ${median(xs).toFixed(1).padStart(7)} ms   ratio to baseline ${(median(xs) / baseline).toFixed(2)}`);
}
