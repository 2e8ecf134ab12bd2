/**
 * The room board under a full house: the time from a live check-in's 200 answer to the
 * guest's tile drawn on a staff member's open board, while the hotel's 500 rooms are all
 * occupied and the PMS keeps them so: 20 turnovers per second (the room's guest checks
 * out, a new guest checks in) and a 500-guest full-list sync every 10 s. Beside it, in
 * the same run, the floor: the same check-in's `roster` event arriving on a bare
 * event-stream client in Node (no page, no re-read, no drawing).
 *
 *   npm run bench:board                         # a short run (15 s measured)
 *   BENCH_DURATION=60 npm run bench:board       # the full run
 *   DATABASE_URL=postgres://… npm run bench:board
 *
 * Knobs (environment): BENCH_DURATION measured seconds (15), BENCH_WARMUP seconds before
 * them, not counted (3), BENCH_RATE check-ins per second (20), BENCH_ROOMS (500),
 * BENCH_SYNC_EVERY seconds (10), BENCH_SYNC_CHANGES guests each periodic sync changes
 * (10), BENCH_VACANT_PCT (20): the hotel's room list holds the full house's rooms plus this
 * share of vacant rooms, one in four of them out of order, so the board is a room rack
 * (README.md: Rooms); BENCH_ROOM_LIST=0: no room list (the board shows the guests only,
 * as without one), CHROMIUM_PATH (/usr/bin/chromium).
 *
 * Three processes: the service (`node bin/innsync.js serve` on a fresh DATA_DIR, set up
 * with the `innsync` command: a hotel, a receptionist, key pairs), Debian's headless
 * chromium (playwright-core) logged in on the board, and this one, which is the PMS (its
 * HTTPS requests, certificate checked) and the floor's event-stream client.
 *
 * Clocks: every stamp is `performance.timeOrigin + performance.now()`, in this process
 * and in the page. Both are the machine's monotonic clock (CLOCK_MONOTONIC on Linux),
 * moved to epoch milliseconds by an offset each process took from the wall clock when it
 * started; they disagree only if the wall clock was stepped or slewed between those two
 * moments. The run measures that disagreement before and after the load (the page's
 * clock read over the DevTools connection, bracketed by this process's clock, the
 * quickest of 20 round trips) and prints it; the figures are not corrected by it. The 200
 * and the floor's event are stamped in this process, so the floor needs no comparison.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Agent, request } from 'undici';
import { launchChromium, logInToDashboard } from '../test/support/chromium.js';
import { DashboardStream } from '../test/support/drill-event-stream.js';
import { Instance, sleep, type InstanceStorage } from '../test/support/drill-instance.js';
import { innsync } from './lib/cli.js';
import { FullHouse, KeyPool, PmsClient, roomNumbers } from './lib/full-house.js';
import { HouseLoad, type CheckIn } from './lib/house-load.js';
import { cpuSeconds } from './lib/proc.js';
import { describe, intEnv, now } from './lib/stats.js';

/** Check-ins (and check-outs) per key: under the limit of 60 per key and minute. */
const PER_KEY = 50;
/** Syncs per key: under the limit of 10 per key and hour. */
const SYNCS_PER_KEY = 9;
const SESSION_COOKIE = '__Host-innsync_session';
const TARGET_P95_MS = 100;

interface Options {
  durationS: number;
  warmupS: number;
  rate: number;
  rooms: number;
  syncEveryS: number;
  syncChanges: number;
  vacantPct: number;
}

function options(): Options {
  return {
    durationS: intEnv('BENCH_DURATION', 15),
    warmupS: intEnv('BENCH_WARMUP', 3),
    rate: intEnv('BENCH_RATE', 20),
    rooms: intEnv('BENCH_ROOMS', 500),
    syncEveryS: intEnv('BENCH_SYNC_EVERY', 10),
    syncChanges: intEnv('BENCH_SYNC_CHANGES', 10),
    // BENCH_ROOM_LIST=0: no room list, the board as it is without one (the comparison).
    vacantPct: process.env.BENCH_ROOM_LIST === '0' ? 0 : intEnv('BENCH_VACANT_PCT', 20),
  };
}

/**
 * Runs in the page (plain JavaScript: the project's TypeScript has no DOM types). The
 * board adds a tile when a guest is new or changed; the first time a guest's tile (its
 * `data-guest-id`) is added, the observer stamps it, and the next animation frame after
 * it stamps when it is drawn. It also stamps every render (a batch of tiles added), and
 * keeps every resource timing (the board's re-reads of the roster).
 */
const RECORDER = `(() => {
  const board = new Map(); window.__board = board; window.__renders = [];
  performance.setResourceTimingBufferSize(1000000);
  const stamp = () => performance.timeOrigin + performance.now();
  let fresh = [];
  new MutationObserver((records) => {
    const t = stamp();
    let added = false;
    for (const r of records) for (const n of r.addedNodes) {
      if (n.nodeType !== 1) continue;
      for (const el of n.matches('[data-guest-id]') ? [n] : n.querySelectorAll('[data-guest-id]')) {
        added = true;
        const id = el.dataset.guestId;
        if (!board.has(id)) { const e = { tile: t, paint: 0 }; board.set(id, e); fresh.push(e); }
      }
    }
    if (added) window.__renders.push(t);
    if (fresh.length === 0) return;
    const drawn = fresh; fresh = [];
    requestAnimationFrame(() => { const p = stamp(); for (const e of drawn) e.paint = p; });
  }).observe(document.body, { childList: true, subtree: true });
})()`;

/** The board's re-reads of the roster (GET /dashboard/api/guests) as [request start, response end], epoch ms. */
const READS = `performance.getEntriesByType('resource').filter((e) => e.name.includes('/dashboard/api/guests'))
  .map((e) => [performance.timeOrigin + e.startTime, performance.timeOrigin + e.responseEnd])`;

/** The hotel, a receptionist and `keyCount` key pairs, made with the `innsync` command. */
async function setUpHotel(storage: InstanceStorage, keyCount: number): Promise<{ slug: string; email: string; password: string; keys: string[] }> {
  const slug = `full-house-${Date.now().toString(36)}`;
  await innsync(storage, ['hotel', 'create', slug, '--name', 'Full House Hotel', '--time-zone', 'UTC']);
  const email = `desk@${slug}.example`;
  const password = 'full-house-password-1';
  await innsync(storage, ['user', 'create', slug, '--email', email, '--role', 'receptionist'], password);
  // The admin who imports the room list.
  await innsync(storage, ['user', 'create', slug, '--email', `admin@${slug}.example`, '--role', 'admin'], password);
  const keys: string[] = [];
  // The bench's pools hold more pairs than a hotel may by default (README.md: MAX_KEY_PAIRS_PER_HOTEL).
  const limit = { MAX_KEY_PAIRS_PER_HOTEL: String(keyCount) };
  for (let i = 0; i < keyCount; i++) keys.push(String((await innsync(storage, ['key', 'issue', slug], '', limit)).live));
  return { slug, email, password, keys };
}

/** How many keys each pool needs: a cycling pool comes back to a key after at least 65 s (its one-minute window is over). */
function keyCounts(o: Options): { turnover: number; sync: number } {
  const checkIns = o.rate * (o.warmupS + o.durationS);
  const syncs = 1 + Math.floor((o.warmupS + o.durationS) / o.syncEveryS);
  return { turnover: Math.min(Math.ceil(checkIns / PER_KEY), Math.ceil((o.rate * 65) / PER_KEY) + 1), sync: Math.ceil(syncs / SYNCS_PER_KEY) };
}

/**
 * Polls `expression` in the page until it is true (true) or `timeoutMs` has passed (false).
 * Not `page.waitForFunction`: its polling evaluates strings in the page, which the
 * dashboard's Content-Security-Policy (no 'unsafe-eval') forbids.
 */
async function waitInPage(page: Page, expression: string, timeoutMs: number): Promise<boolean> {
  for (const deadline = now() + timeoutMs; now() < deadline; await sleep(100)) if (await page.evaluate(expression)) return true;
  return false;
}

/**
 * The room list's CSV: the full house's rooms (101–150, 201–250, …) and `vacant` more, 51
 * onwards on each floor in turn, one in four of those out of order.
 */
function roomListCsv(rooms: number, vacant: number): { csv: string; outOfOrder: number } {
  const lines = ['room,floor,type,out_of_order_reason', ...roomNumbers(rooms).map((r) => `${r},,Double,`)];
  const floors = Math.max(1, Math.ceil(rooms / 50));
  let outOfOrder = 0;
  for (let i = 0; i < vacant; i++) {
    const floor = (i % floors) + 1;
    const room = floor * 100 + 51 + Math.floor(i / floors);
    const broken = i % 4 === 3;
    if (broken) outOfOrder++;
    lines.push(`${room},,Single,${broken ? 'Repainting' : ''}`);
  }
  return { csv: lines.join('\n'), outOfOrder };
}

/** Imports the room list as the hotel's admin does on the Rooms page (the dashboard API). */
async function importRoomList(baseUrl: string, agent: Agent, slug: string, password: string, csv: string): Promise<number> {
  const login = await request(`${baseUrl}/dashboard/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `admin@${slug}.example`, password }),
    dispatcher: agent,
  });
  const session = (await login.body.json()) as { csrfToken?: string };
  const raw = login.headers['set-cookie'];
  const cookie = (Array.isArray(raw) ? raw : [raw ?? '']).map((c) => c.split(';')[0] ?? '').find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (login.statusCode !== 200 || !cookie || !session.csrfToken) throw new Error(`the admin's login failed: ${login.statusCode}`);
  const res = await request(`${baseUrl}/dashboard/api/rooms/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': session.csrfToken },
    body: JSON.stringify({ csv }),
    dispatcher: agent,
  });
  const body = (await res.body.json()) as { rooms?: number };
  if (res.statusCode !== 200 || body.rooms === undefined)
    throw new Error(`the room list import failed: ${res.statusCode} ${JSON.stringify(body).slice(0, 300)}`);
  return body.rooms;
}

interface Board {
  context: BrowserContext;
  page: Page;
  cookie: string;
  /** The page's errors and its failed or refused requests. */
  problems: string[];
}

/** Logs in on the board, waits until it shows every room, then starts the recorder. */
async function openBoard(browser: Browser, baseUrl: string, email: string, password: string, rooms: number, listed: number): Promise<Board> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 900 },
    reducedMotion: process.env.BENCH_REDUCED_MOTION === '1' ? 'reduce' : 'no-preference',
  });
  const page = await context.newPage();
  await logInToDashboard(page, baseUrl, email, password);
  if (!(await waitInPage(page, `document.querySelectorAll('[data-guest-id]').length >= ${rooms}`, 60_000)))
    throw new Error(`the board did not show ${rooms} rooms`);
  if (listed > 0 && !(await waitInPage(page, `document.querySelectorAll('.tile[data-room]').length >= ${listed}`, 60_000)))
    throw new Error(`the board did not show the ${listed} rooms of its room list`);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  await page.evaluate(RECORDER);
  const cookie = (await context.cookies()).find((c) => c.name === SESSION_COOKIE)?.value;
  if (!cookie) throw new Error('no session cookie after the login');
  return { context, page, cookie, problems };
}

/** The floor: the dashboard's event stream read in Node with the board's session; when each check-in's event arrives. */
async function openFloor(baseUrl: string, cookie: string): Promise<{ stream: DashboardStream; arrivals: Map<string, number> }> {
  const arrivals = new Map<string, number>();
  const stream = new DashboardStream(() => baseUrl, cookie);
  stream.onEvent((e) => {
    const t = now();
    for (const c of e.changes) if (c.action === 'guest.checked_in' && !arrivals.has(c.guestId)) arrivals.set(c.guestId, t);
  });
  for (let waited = 0; stream.readyCount === 0; waited += 50) {
    if (waited > 10_000) throw new Error('the event stream did not open');
    await sleep(50);
  }
  return { stream, arrivals };
}

/** The page's clock minus this process's, from the quickest of 20 DevTools round trips: [low, high] ms. */
async function clockOffset(page: Page): Promise<[number, number]> {
  let best: [number, number] = [-Infinity, Infinity];
  for (let i = 0; i < 20; i++) {
    const before = now();
    const inPage = (await page.evaluate('performance.timeOrigin + performance.now()')) as number;
    const after = now();
    if (after - before < best[1] - best[0]) best = [inPage - after, inPage - before];
  }
  return best;
}

/** Fills every room with the first sync (as a PMS's first full list) and checks that all were checked in. */
async function fillHouse(house: FullHouse, client: PmsClient, syncKeys: KeyPool): Promise<number> {
  const guests = house.fullList();
  const started = now();
  const res = await client.post('/guests/sync', syncKeys.next(), { syncMode: 'full', guests });
  if (res.status !== 200 || res.body?.summary?.checkedIn !== guests.length) throw new Error(`the first sync failed: ${res.status} ${res.text.slice(0, 300)}`);
  for (const g of guests) house.checkedIn(g);
  return res.answeredAt - started;
}

interface BoardWork {
  /** Renders of the board (each replaces every tile). */
  renders: number;
  /** Each re-read of the roster: request start → response end. */
  readMs: number[];
  /** Each render: the end of the re-read before it → its tiles in the DOM (JSON, sorting, building the tiles). */
  renderMs: number[];
}

/** What the board did from `from` (epoch ms) on. */
async function boardWork(page: Page, from: number): Promise<BoardWork> {
  const reads = (await page.evaluate(READS)) as Array<[number, number]>;
  const renders = ((await page.evaluate('window.__renders')) as number[]).filter((t) => t >= from);
  const renderMs: number[] = [];
  for (const t of renders) {
    const before = reads.filter(([, end]) => end <= t).at(-1);
    if (before) renderMs.push(t - before[1]);
  }
  return { renders: renders.length, readMs: reads.filter(([start]) => start >= from).map(([start, end]) => end - start), renderMs };
}

interface Series {
  tile: number[];
  drawn: number[];
  floor: number[];
  missingTiles: number;
  missingEvents: number;
}

/** Waits (up to 15 s) for every measured guest's tile to be drawn, then pairs the page's and the floor's stamps with the answers. */
async function collect(page: Page, checkIns: CheckIn[], arrivals: Map<string, number>): Promise<Series> {
  const measured = checkIns.filter((c) => c.measured);
  const ids = JSON.stringify(measured.map((c) => c.guestId));
  await waitInPage(page, `${ids}.every((id) => (window.__board.get(id)?.paint ?? 0) > 0)`, 15_000);
  const seen = (await page.evaluate('Object.fromEntries([...window.__board].map(([id, e]) => [id, [e.tile, e.paint]]))')) as Record<string, [number, number]>;
  const s: Series = { tile: [], drawn: [], floor: [], missingTiles: 0, missingEvents: 0 };
  for (const c of measured) {
    const [tile, paint] = seen[c.guestId] ?? [0, 0];
    if (paint > 0) {
      s.tile.push(tile - c.answeredAt);
      s.drawn.push(paint - c.answeredAt);
    } else s.missingTiles++;
    const event = arrivals.get(c.guestId);
    if (event === undefined) s.missingEvents++;
    else s.floor.push(event - c.answeredAt);
  }
  return s;
}

const fmt = (n: number): string => n.toFixed(1).padStart(9);

function printSeries(s: Series): void {
  console.log(`${'ms after the 200 answer'.padEnd(44)}${['n', 'median', 'p95', 'p99', 'max'].map((h) => h.padStart(9)).join('')}`);
  const row = (name: string, v: number[]): void => {
    const d = describe(v);
    console.log(`${name.padEnd(44)}${String(v.length).padStart(9)}${fmt(d.median)}${fmt(d.p95)}${fmt(d.p99)}${fmt(d.max)}`);
  };
  row('tile in the board (DOM, MutationObserver)', s.tile);
  row('tile drawn (next animation frame)', s.drawn);
  row('floor: event on a bare stream client', s.floor);
  const drawn = describe(s.drawn);
  const floor = describe(s.floor);
  console.log('');
  console.log(
    `board ÷ floor: median ${(drawn.median / floor.median).toFixed(1)}×, p95 ${(drawn.p95 / floor.p95).toFixed(1)}× (board − floor at p95: ${(drawn.p95 - floor.p95).toFixed(1)} ms)`,
  );
  console.log(`p95 of the drawn tile: ${drawn.p95.toFixed(1)} ms (target < ${TARGET_P95_MS} ms: ${drawn.p95 < TARGET_P95_MS ? 'MET' : 'NOT MET'})`);
}

interface RunFigures {
  o: Options;
  engine: string;
  browserVersion: string;
  fillMs: number;
  load: HouseLoad;
  elapsedS: number;
  serverCpuS: number;
  work: BoardWork;
  clocks: Array<[number, number]>;
  roomList: { listed: number; vacant: number; outOfOrder: number } | null;
}

function printRun(f: RunFigures): void {
  const syncMs = describe(f.load.syncs.map((s) => s.ms));
  const read = describe(f.work.readMs);
  const render = describe(f.work.renderMs);
  const measuredS = f.o.durationS;
  console.log(`innsync room board under a full house, ${new Date().toISOString()}`);
  console.log(
    `engine ${f.engine}, node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(2) ?? '?'}, chromium ${f.browserVersion}`,
  );
  console.log(
    `${f.o.rooms} rooms filled by one sync in ${f.fillMs.toFixed(0)} ms; then ${f.o.warmupS} s warm-up + ${f.o.durationS} s measured: ` +
      `${f.load.checkIns.length} turnovers (check-out + check-in) at ${f.o.rate}/s, syncs of the whole house every ${f.o.syncEveryS} s: ${f.load.syncs.length} ` +
      (f.load.syncs.length > 0 ? `(${f.o.syncChanges} guests changed each; median ${syncMs.median.toFixed(0)} ms, max ${syncMs.max.toFixed(0)} ms)` : ''),
  );
  console.log(
    f.roomList
      ? `room list: ${f.roomList.listed} rooms (the house's ${f.o.rooms} + ${f.roomList.vacant} vacant, ${f.roomList.outOfOrder} of them out of order): the board is a room rack`
      : 'no room list: the board shows the guests only',
  );
  console.log(`server CPU ${((100 * f.serverCpuS) / f.elapsedS).toFixed(0)} % of one core over the ${f.elapsedS.toFixed(1)} s of load`);
  console.log(
    `board, measured period: ${f.work.renders} renders that added tiles (${(f.work.renders / measuredS).toFixed(1)}/s); ` +
      `re-read of the roster median ${read.median.toFixed(1)} / p95 ${read.p95.toFixed(1)} ms; ` +
      `render (re-read's end → tiles in the DOM) median ${render.median.toFixed(1)} / p95 ${render.p95.toFixed(1)} ms`,
  );
  const clocks = f.clocks.map(([lo, hi]) => `[${lo.toFixed(2)}, ${hi.toFixed(2)}]`).join(' before, ');
  console.log(`page clock − this process's clock: ${clocks} after (ms; not corrected)`);
  console.log('');
}

/** The service on `storage`, and the PMS's HTTPS agent that checks its certificate (self-signed, made for localhost) on 127.0.0.1. */
async function startService(storage: InstanceStorage): Promise<{ instance: Instance; agent: Agent }> {
  const instance = await Instance.start({ label: 'server', dataDir: storage.dataDir, databaseUrl: storage.databaseUrl });
  const cert = fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8');
  return { instance, agent: new Agent({ connect: { ca: cert, servername: 'localhost' }, connections: 16 }) };
}

/** Runs the load, measured from the end of the warm-up; the server's CPU time over it. */
async function runLoad(o: Options, load: HouseLoad, serverPid: number): Promise<{ measureFrom: number; elapsedS: number; serverCpuS: number }> {
  const cpuBefore = cpuSeconds(serverPid);
  const started = now();
  await load.run((o.warmupS + o.durationS) * 1000, o.warmupS * 1000);
  return { measureFrom: started + o.warmupS * 1000, elapsedS: (now() - started) / 1000, serverCpuS: cpuSeconds(serverPid) - cpuBefore };
}

/** Prints what makes the run invalid; true when nothing does. */
function checkRun(load: HouseLoad, series: Series, board: Board): boolean {
  for (const p of board.problems.slice(0, 10)) console.log(`  board: ${p}`);
  if (load.failures.length === 0 && series.missingTiles === 0 && series.missingEvents === 0) return true;
  console.log(`INVALID RUN: ${load.failures.length} failed requests, ${series.missingTiles} tiles never drawn, ${series.missingEvents} events never arrived`);
  for (const f of load.failures.slice(0, 10)) console.log(`  ${f}`);
  return false;
}

interface Setup {
  o: Options;
  storage: InstanceStorage;
  hotel: Awaited<ReturnType<typeof setUpHotel>>;
  keyCounts: { turnover: number; sync: number };
  instance: Instance;
  agent: Agent;
  browser: Browser;
}

/** Fills the house, opens the board and the floor, runs the load and prints the figures; false when the run is invalid. */
/** Starts the page's JavaScript profiler; the returned function stops it and gives the profile. */
async function startProfile(page: Page): Promise<() => Promise<unknown>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.start');
  return async () => (await cdp.send('Profiler.stop')).profile;
}

async function benchmark(s: Setup): Promise<boolean> {
  const { o, hotel, instance } = s;
  const client = new PmsClient(instance.baseUrl, hotel.slug, s.agent);
  const turnoverKeys = hotel.keys.slice(0, s.keyCounts.turnover);
  const keys = {
    checkIn: new KeyPool(turnoverKeys, PER_KEY, true),
    checkOut: new KeyPool(turnoverKeys, PER_KEY, true),
    sync: new KeyPool(hotel.keys.slice(s.keyCounts.turnover), SYNCS_PER_KEY, false),
  };
  const house = new FullHouse(o.rooms, Date.now().toString(36), new Date().toISOString().slice(0, 10));
  const fillMs = await fillHouse(house, client, keys.sync);
  const vacant = Math.round((o.rooms * o.vacantPct) / 100);
  const list = vacant > 0 ? roomListCsv(o.rooms, vacant) : null;
  const listed = list ? await importRoomList(instance.baseUrl, s.agent, hotel.slug, hotel.password, list.csv) : 0;
  const board = await openBoard(s.browser, `https://localhost:${instance.port}`, hotel.email, hotel.password, o.rooms, listed);
  const roomList = list ? { listed, vacant, outOfOrder: list.outOfOrder } : null;
  const floor = await openFloor(instance.baseUrl, board.cookie);
  try {
    const clocks = [await clockOffset(board.page)];
    const load = new HouseLoad(house, client, keys, { rate: o.rate, syncEveryMs: o.syncEveryS * 1000, syncChanges: o.syncChanges });
    // BENCH_TRACE=<file>: a Chromium trace of the page during the load (open it in chrome://tracing or Perfetto).
    const trace = process.env.BENCH_TRACE;
    if (trace) await s.browser.startTracing(board.page, { path: trace, categories: ['devtools.timeline', 'blink', 'v8.execute'] });
    // BENCH_PROFILE=<file>: the page's JavaScript CPU profile during the load (.cpuprofile, for DevTools).
    const profile = process.env.BENCH_PROFILE ? await startProfile(board.page) : null;
    const run = await runLoad(o, load, instance.pid);
    if (trace) await s.browser.stopTracing();
    if (profile && process.env.BENCH_PROFILE) fs.writeFileSync(process.env.BENCH_PROFILE, JSON.stringify(await profile()));
    const series = await collect(board.page, load.checkIns, floor.arrivals);
    clocks.push(await clockOffset(board.page));
    const work = await boardWork(board.page, run.measureFrom);
    const engine = s.storage.databaseUrl ? 'postgres' : 'sqlite';
    printRun({ o, engine, browserVersion: s.browser.version(), fillMs, load, ...run, work, clocks, roomList });
    printSeries(series);
    return checkRun(load, series, board);
  } finally {
    floor.stream.close();
    await board.context.close();
  }
}

async function main(): Promise<void> {
  const o = options();
  const storage: InstanceStorage = { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-board-')), databaseUrl: process.env.DATABASE_URL ?? null };
  try {
    const counts = keyCounts(o);
    const hotel = await setUpHotel(storage, counts.turnover + counts.sync);
    const { instance, agent } = await startService(storage);
    const browser = await launchChromium().catch(async (err: unknown) => {
      await instance.stop();
      throw err;
    });
    try {
      if (!(await benchmark({ o, storage, hotel, keyCounts: counts, instance, agent, browser }))) process.exitCode = 1;
    } finally {
      await browser.close();
      await agent.close();
      await instance.stop();
    }
  } finally {
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
