import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import * as repo from '../db/repositories/webhook.repository.js';
import { newId } from '../domain/ids.js';
import type { Metrics } from '../http/metrics.js';
import { guardedLookup, isPublicAddress } from './address-guard.js';
import { signedHeaders } from './signing.js';

/** A 2xx within this time is a success; anything else is retried. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Retried for at least this long after the event, then given up. */
export const GIVE_UP_AFTER_MS = 3 * 24 * 3600_000;
/** The first retry comes within about a second, then the wait doubles up to an hour. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 3600_000;
/** A claim lasts past the delivery's time limit; a sender that stalls longer loses it to another. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
/** How much of a receiver's answer is kept for the Webhooks page. */
const RESPONSE_KEPT_BYTES = 4 * 1024;
/** Deliveries sent at once (each the head of its own endpoint's queue). */
const BATCH = 20;
/** Deliveries due later (retries, other instances' events) are looked for this often. */
const POLL_MS = 1_000;

/** The wait before attempt `attempts + 1`: doubling, capped, with jitter (half to all of it), so receivers that come back are not hit by every sender at once. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const full = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(full * (0.5 + random() / 2));
}

interface Answer {
  status: number | null;
  error: string | null;
  response: string | null;
  latencyMs: number;
}

/** What the rest of the service needs of the sender: a nudge after a commit that wrote events, and the operator's address rule. */
export interface WebhookOutbox {
  wake(): void;
  readonly allowPrivateNetworks: boolean;
}

/** No sender (the OpenAPI writer builds the app without one). */
export const NO_OUTBOX: WebhookOutbox = { wake: () => undefined, allowPrivateNetworks: false };

/**
 * Sends the outbox's deliveries (decisions.md, Events): each endpoint's in the order of the
 * hotel's events, at least once, signed per Standard Webhooks. Woken after each commit that
 * wrote events, and every second for retries and for events other instances wrote. Several
 * instances on one PostgreSQL share the work (claims, repository), each delivery sent by one.
 */
export class WebhookDispatcher implements WebhookOutbox {
  private readonly owner = newId('sender');
  private readonly agents: { http: http.Agent; https: https.Agent };
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly opts: { allowPrivateNetworks: boolean; metrics?: Metrics },
  ) {
    // Connections are kept for the next delivery: most go to the same few receivers.
    const lookup = guardedLookup(opts.allowPrivateNetworks);
    this.agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };
    opts.metrics?.watchWebhookOutbox(async () => {
      const oldest = await repo.oldestPendingDelivery(this.db);
      return oldest ? Math.max(0, (Date.now() - Date.parse(oldest)) / 1000) : 0;
    });
  }

  get allowPrivateNetworks(): boolean {
    return this.opts.allowPrivateNetworks;
  }

  /** Starts sending; returns once a crashed run's claims are released (PostgreSQL: they lapse at their lease). */
  async start(): Promise<void> {
    await repo.releaseStaleClaims(this.db);
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (after a commit that wrote events). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((err: unknown) => this.logger.warn({ err }, 'webhook delivery round failed'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming; waits for the deliveries under way (each is at most DELIVERY_TIMEOUT_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Claims and sends until nothing is due: a success makes the endpoint's next event due at once. */
  private async drain(): Promise<void> {
    while (!this.stopped) {
      const now = Date.now();
      const claimed = await repo.claimDueDeliveries(this.db, this.owner, new Date(now).toISOString(), new Date(now + LEASE_MS).toISOString(), BATCH);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((d) => this.deliver(d)));
    }
  }

  private async deliver(d: repo.ClaimedDelivery): Promise<void> {
    const answer = await this.send(d);
    const at = new Date();
    const ok = answer.status !== null && answer.status >= 200 && answer.status < 300;
    const expired = at.getTime() - Date.parse(d.createdAt) >= GIVE_UP_AFTER_MS;
    const result = ok ? 'succeeded' : expired ? 'failed' : 'retry';
    const nextAttemptAt = new Date(at.getTime() + (result === 'retry' ? retryDelayMs(d.attempts + 1) : 0)).toISOString();
    const recorded = await repo.recordAttempt(this.db, d.id, this.owner, { at: at.toISOString(), ...answer, result, nextAttemptAt });
    if (!recorded) return; // the claim lapsed and another sender took the delivery over
    this.opts.metrics?.webhookAttempt(result);
    if (result === 'failed') {
      const last = answer.status !== null ? `HTTP ${answer.status}` : (answer.error ?? 'no answer');
      const reason = `Deliveries failed for 3 days (last answer: ${last}). Fix the receiver, then enable the endpoint again: its waiting events are sent then.`;
      await repo.setEndpointDisabled(this.db, d.endpointId, at.toISOString(), reason);
      this.logger.warn({ endpointId: d.endpointId, deliveryId: d.id, last }, 'webhook endpoint disabled after 3 days of failed deliveries');
    }
  }

  /** One HTTP attempt: the signed event, a 10-second limit, the first 4 KiB of the answer kept. Never throws. */
  private send(d: repo.ClaimedDelivery): Promise<Answer> {
    const started = performance.now();
    const done = (a: Omit<Answer, 'latencyMs'>): Answer => ({ ...a, latencyMs: performance.now() - started });
    let url: URL;
    try {
      url = new URL(d.url);
    } catch {
      return Promise.resolve(done({ status: null, error: 'the endpoint URL is not valid', response: null }));
    }
    // A literal address never reaches the resolver: it is checked here, as a resolved name is in guardedLookup.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!this.opts.allowPrivateNetworks && ((net.isIP(host) !== 0 && !isPublicAddress(host)) || url.protocol !== 'https:')) {
      return Promise.resolve(done({ status: null, error: `${url.protocol}//${host} is not a public https:// address`, response: null }));
    }
    const body = Buffer.from(d.payload);
    const headers = {
      ...signedHeaders(d.secrets, d.eventId, d.payload, Date.now()),
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'innsync-webhooks/1',
    };
    const client = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? this.agents.https : this.agents.http;
    return new Promise<Answer>((resolve) => {
      const req = client.request(url, { method: 'POST', headers, agent, signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) }, (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_KEPT_BYTES) chunks.push(chunk.subarray(0, RESPONSE_KEPT_BYTES - kept));
          kept += chunk.length;
        });
        res.on('end', () => resolve(done({ status: res.statusCode ?? null, error: null, response: Buffer.concat(chunks).toString('utf8') })));
        res.on('error', (err) => resolve(done({ status: res.statusCode ?? null, error: err.message, response: Buffer.concat(chunks).toString('utf8') })));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        const error = err.name === 'AbortError' || err.name === 'TimeoutError' ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} seconds` : err.message;
        resolve(done({ status: null, error, response: null }));
      });
      req.end(body);
    });
  }
}
