import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/webhooks/events.js';
import { startTestServer, type TestServer } from '../support/harness.js';

// The API reference documents every event type with an example body.

describe('the API reference on events', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
  });
  afterAll(() => t.close());

  it('lists every event type with an example whose body has the documented members', async () => {
    const page = await t.api('GET', '/api/pms/v1/docs', { key: null });
    expect(page.status).toBe(200);
    const text = page.text.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
    expect(text).toContain('Events (webhooks)');
    for (const type of [...EVENT_TYPES, 'webhook.test']) {
      const at = text.indexOf(`Example <code>${type}</code>`);
      expect(at, type).toBeGreaterThan(0);
      const code = /<pre><code>([\s\S]*?)<\/code><\/pre>/.exec(text.slice(at))?.[1] ?? '';
      const body = JSON.parse(code) as Record<string, unknown>;
      expect(Object.keys(body), type).toEqual(['id', 'type', 'createdAt', 'hotel', 'data']);
      expect(body.type).toBe(type);
    }
  });
});
