import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One delivery as the receiver saw it, after verifying its signature. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: { id: string; type: string; createdAt: string; hotel: { slug: string }; data: Record<string, unknown> };
  /** Which of the receiver's secrets verified it. */
  verifiedWith: string[];
  at: number;
}

/**
 * A webhook receiver on a free loopback port that verifies every delivery with the
 * `standardwebhooks` package against the secrets it is given, records the verified ones
 * (a delivery no secret verifies is answered 400 and counted in `unverified`) and
 * answers with the next status of `script` (then 200).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  readonly unverified: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  private script: number[] = [];
  private server: http.Server;

  constructor(private secrets: string[] = []) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = {
          'webhook-id': h(req, 'webhook-id'),
          'webhook-timestamp': h(req, 'webhook-timestamp'),
          'webhook-signature': h(req, 'webhook-signature'),
        };
        const verifiedWith = this.secrets.filter((s) => {
          try {
            new Webhook(s).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
        if (verifiedWith.length === 0) {
          this.unverified.push({ headers: req.headers, body });
          res.writeHead(400).end('signature not verified');
          return;
        }
        const status = this.script.shift() ?? 200;
        if (status >= 200 && status < 300)
          this.received.push({
            id: headers['webhook-id'],
            timestamp: headers['webhook-timestamp'],
            signature: headers['webhook-signature'],
            body: JSON.parse(body) as Received['body'],
            verifiedWith,
            at: performance.now(),
          });
        else
          this.received.push({
            id: headers['webhook-id'],
            timestamp: '',
            signature: '',
            body: JSON.parse(body) as Received['body'],
            verifiedWith,
            at: -status,
          });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** The secrets deliveries are verified with (set after the endpoint's creation shows its secret). */
  trust(...secrets: string[]): void {
    this.secrets = secrets;
  }

  /** The next answers' statuses, in order (e.g. [500, 500] then 200s). */
  answerWith(...statuses: number[]): void {
    this.script.push(...statuses);
  }

  /** Forgets the statuses still scripted: every delivery is answered 200 from now on. */
  answerNormally(): void {
    this.script = [];
  }

  /** Deliveries answered 2xx, in arrival order. */
  accepted(): Received[] {
    return this.received.filter((r) => r.at >= 0);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function h(req: http.IncomingMessage, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}
