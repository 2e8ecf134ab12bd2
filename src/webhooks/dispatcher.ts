import http from 'node:http';
import https from 'node:https';
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import * as repo from '../db/repositories/webhook.repository.js';
import { newId } from '../domain/ids.js';
import type { Metrics } from '../http/metrics.js';
import { ADDRESS_REFUSED, guardedLookup, PUBLIC_PORTS, refusedTarget } from './address-guard.js';
import type { EndpointRules } from './endpoints.js';
import { signedHeaders } from './signing.js';
import { detached, eventTraceContext, inSpan } from '../tracing/spans.js';

/** A 2xx within this time is a success; anything else is retried. */
const DELIVERY_TIMEOUT_MS = 10_000;
/** Retried for at least this long after the event, then given up. */
const GIVE_UP_AFTER_MS = 3 * 24 * 3600_000;
/** The first retry comes within about a second, then the wait doubles up to an hour. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 3600_000;
/** A claim lasts past the delivery's time limit; a sender that stalls longer loses it to another. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
/** Deliveries under way at once from this sender, each the head of its own endpoint's queue (per hotel: WEBHOOK_MAX_ENDPOINTS_PER_HOTEL). */
const MAX_IN_FLIGHT = 200;
/** Deliveries claimed by one query at most. */
const CLAIM_BATCH = 50;
/** Deliveries due later (retries, other instances' events) are looked for this often. */
const POLL_MS = 1_000;

/** The wait before attempt `attempts + 1`: doubling, capped, with jitter (half to all of it), so receivers that come back are not hit by every sender at once. */
function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const full = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(full * (0.5 + random() / 2));
}

/** One attempt's outcome. A receiver's answer body is not kept: it may echo the guest's data it was sent. */
interface Answer {
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/** What the rest of the service needs of the sender: a nudge after a commit that wrote events, and the operator's endpoint rules. */
export interface WebhookOutbox {
  wake(): void;
  readonly rules: EndpointRules;
}

/** No sender (the OpenAPI writer builds the app without one). */
export const NO_OUTBOX: WebhookOutbox = { wake: () => undefined, rules: { allowPrivateNetworks: false, maxEndpointsPerHotel: 10 } };

/**
 * Sends the outbox's deliveries (README.md, "Webhooks"): each endpoint's in the order of the
 * hotel's events, at least once, signed per Standard Webhooks. Woken after each commit that
 * wrote events, and every second for retries and for events other instances wrote. Several
 * instances on one PostgreSQL share the work (claims, repository), each delivery sent by one.
 *
 * Each delivery goes on its own: when one ends (answered, refused, or timed out) its
 * endpoint's next event is claimed, whatever the others are doing, so a receiver that
 * never answers delays only its own endpoint's queue. At most MAX_IN_FLIGHT deliveries
 * are under way at once, and at most `maxEndpointsPerHotel` of one hotel's.
 */
export class WebhookDispatcher implements WebhookOutbox {
  private readonly owner = newId('sender');
  private readonly agents: { http: http.Agent; https: https.Agent };
  private timer: NodeJS.Timeout | null = null;
  /** The claim round running now, if any. */
  private claiming: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** Deliveries under way (sent, or waiting for their answer), each until its attempt is recorded. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly opts: EndpointRules & { metrics?: Metrics },
  ) {
    // Connections are kept for the next delivery: most go to the same few receivers.
    const lookup = guardedLookup(opts.allowPrivateNetworks);
    this.agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };
    opts.metrics?.watchWebhookOutbox(async () => {
      const oldest = await repo.oldestPendingDelivery(this.db);
      return oldest ? Math.max(0, (Date.now() - Date.parse(oldest)) / 1000) : 0;
    });
  }

  get rules(): EndpointRules {
    return { allowPrivateNetworks: this.opts.allowPrivateNetworks, maxEndpointsPerHotel: this.opts.maxEndpointsPerHotel };
  }

  /** Starts sending; returns once a crashed run's claims are released (PostgreSQL: they lapse at their lease). */
  async start(): Promise<void> {
    await repo.releaseStaleClaims(this.db);
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (after a commit that wrote events, or when a delivery ended). */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    // A request's commit wakes the sender: its claims are not part of that request's trace.
    this.claiming = detached(() => this.claim())
      .catch((err: unknown) => this.logger.warn({ err }, 'webhook delivery round failed'))
      .finally(() => {
        this.claiming = null;
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
    await this.claiming;
    await Promise.all(this.inFlight);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Claims what is due, as far as there is room, and starts each delivery on its own; none waits for another. */
  private async claim(): Promise<void> {
    while (!this.stopped) {
      const room = Math.min(CLAIM_BATCH, MAX_IN_FLIGHT - this.inFlight.size);
      if (room <= 0) return; // a delivery that ends wakes the next round
      const now = Date.now();
      const claimed = await repo.claimDueDeliveries(
        this.db,
        this.owner,
        new Date(now).toISOString(),
        new Date(now + LEASE_MS).toISOString(),
        room,
        this.opts.maxEndpointsPerHotel,
      );
      for (const d of claimed) this.launch(d);
      if (claimed.length < room) return;
    }
  }

  /** Sends one delivery; when its attempt is recorded, the endpoint's next event (a success makes it due at once) is looked for. */
  private launch(d: repo.ClaimedDelivery): void {
    const running: Promise<void> = this.deliver(d)
      .catch((err: unknown) => this.logger.warn({ err, deliveryId: d.id }, 'webhook delivery failed to record'))
      .finally(() => {
        this.inFlight.delete(running);
        this.wake();
      });
    this.inFlight.add(running);
  }

  private async deliver(d: repo.ClaimedDelivery): Promise<void> {
    const answer = await this.send(d);
    const at = new Date();
    const ok = answer.status !== null && answer.status >= 200 && answer.status < 300;
    const expired = at.getTime() - Date.parse(d.createdAt) >= GIVE_UP_AFTER_MS;
    const result = ok ? 'succeeded' : expired ? 'failed' : 'retry';
    const nextAttemptAt = new Date(at.getTime() + (result === 'retry' ? retryDelayMs(d.attempts + 1) : 0)).toISOString();
    const recorded = await repo.recordAttempt(this.db, d.endpointId, d.id, this.owner, { at: at.toISOString(), ...answer, result, nextAttemptAt });
    if (!recorded) return; // the claim lapsed and another sender took the delivery over
    this.opts.metrics?.webhookAttempt(result);
    if (result === 'failed') {
      const last = answer.status !== null ? `HTTP ${answer.status}` : (answer.error ?? 'no answer');
      const reason = `Deliveries failed for 3 days (last answer: ${last}). Fix the receiver, then enable the endpoint again: its waiting events are sent then.`;
      await repo.setEndpointDisabled(this.db, d.hotelId, d.endpointId, at.toISOString(), reason);
      this.logger.warn({ endpointId: d.endpointId, deliveryId: d.id, last }, 'webhook endpoint disabled after 3 days of failed deliveries');
    }
  }

  /**
   * docs/architecture.md, "Traces": each attempt is a CLIENT span in the trace that wrote
   * the event (when this instance wrote it), with the endpoint's id and host, never its path.
   */
  private send(d: repo.ClaimedDelivery): Promise<Answer> {
    const attributes = { 'http.request.method': 'POST', 'innsync.webhook.endpoint_id': d.endpointId, 'innsync.webhook.attempt': d.attempts + 1 };
    return inSpan(
      'webhook.deliver',
      attributes,
      async (span) => {
        const answer = await this.attempt(d, span);
        if (answer.status !== null) span?.setAttribute('http.response.status_code', answer.status);
        if (answer.status === null || answer.status >= 300) span?.setStatus({ code: SpanStatusCode.ERROR });
        return answer;
      },
      { kind: SpanKind.CLIENT, parent: eventTraceContext(d.eventId) },
    );
  }

  /** One HTTP attempt: the signed event, a 10-second limit; of the answer only its status is kept. Never throws. */
  private attempt(d: repo.ClaimedDelivery, span: Span | null): Promise<Answer> {
    const started = performance.now();
    const done = (a: Omit<Answer, 'latencyMs'>): Answer => ({ ...a, latencyMs: performance.now() - started });
    let url: URL;
    try {
      url = new URL(d.url);
    } catch {
      return Promise.resolve(done({ status: null, error: 'the endpoint URL is not valid' }));
    }
    span?.setAttributes({ 'server.address': url.hostname, 'url.scheme': url.protocol.slice(0, -1) });
    // A literal address never reaches the resolver: it is checked here, as a resolved name is in guardedLookup.
    const refused = refusedTarget(url, this.opts.allowPrivateNetworks);
    if (refused !== null) {
      const error =
        refused === 'scheme' ? 'the URL must start with https://' : refused === 'port' ? `the port must be ${PUBLIC_PORTS.join(' or ')}` : ADDRESS_REFUSED;
      this.logger.warn({ endpointId: d.endpointId, deliveryId: d.id, host: url.host, refused }, 'webhook delivery refused: address not allowed');
      return Promise.resolve(done({ status: null, error }));
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
        res.resume(); // the answer's body is read and dropped
        res.on('end', () => resolve(done({ status: res.statusCode ?? null, error: null })));
        res.on('error', (err) => resolve(done({ status: res.statusCode ?? null, error: err.message })));
      });
      req.on('error', (err: NodeJS.ErrnoException & { detail?: string }) => {
        if (err.code === 'EWEBHOOKADDRESS') {
          // The hotel's admin reads only that the address is refused; how the name resolved is for the operator.
          this.logger.warn({ endpointId: d.endpointId, deliveryId: d.id, detail: err.detail }, 'webhook delivery refused: address not allowed');
          return resolve(done({ status: null, error: ADDRESS_REFUSED }));
        }
        const error = err.name === 'AbortError' || err.name === 'TimeoutError' ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} seconds` : err.message;
        resolve(done({ status: null, error }));
      });
      req.end(body);
    });
  }
}
