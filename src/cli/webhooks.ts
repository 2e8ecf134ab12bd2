import { InvalidArgumentError, type Command } from 'commander';
import type { DeliveryView } from '../db/repositories/webhook.repository.js';
import { ApiError, CliError } from '../errors.js';
import type { EndpointView } from '../webhooks/endpoints.js';
import { EVENT_TYPES } from '../webhooks/event-types.js';
import { print, type JsonFlag } from './output.js';
import { configFromEnv, hotelOf, withDb } from './storage.js';

// A hotel's webhook endpoints (README.md, "Webhooks"): the use cases of the dashboard's
// Webhooks page (webhooks/endpoints.ts), from the command line. The service code is loaded
// when a command runs.

const service = () => import('../webhooks/endpoints.js');

const describe = (e: EndpointView): string =>
  `${e.endpointId}  ${e.enabled ? 'enabled ' : 'disabled'}  ${e.url}  events: ${e.events === 'all' ? 'all' : e.events.join(',')}` +
  (e.disabledReason ? `\n    ${e.disabledReason}` : '');

/** How long `webhook test` waits for the server's first attempt by default, in seconds. */
const TEST_WAIT_SECONDS = 15;
/** At most this many deliveries are listed (as on the Webhooks page). */
const MAX_DELIVERIES = 50;

function wholeNumber(name: string, min: number, max: number): (raw: string) => number {
  return (raw) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`);
    return Number(raw);
  };
}

/** One delivery on one line: when, outcome, type, attempts, the last answer, the next attempt. */
function deliveryLine(d: DeliveryView): string {
  const last =
    d.lastStatus !== null ? `HTTP ${d.lastStatus}${d.lastLatencyMs !== null ? ` in ${d.lastLatencyMs} ms` : ''}` : (d.lastError ?? 'not attempted yet');
  const next = d.nextAttemptAt ? `  next attempt ${d.nextAttemptAt.replace('T', ' ').slice(0, 19)}` : '';
  return `${d.createdAt.replace('T', ' ').slice(0, 19)}  ${d.status.padEnd(9)}  ${d.eventType}  attempts ${d.attempts}  last: ${last}${next}  (${d.id}, event ${d.eventId})`;
}

export function addWebhookCommands(program: Command, json: JsonFlag): void {
  const webhook = program.command('webhook').description("manage a hotel's webhook endpoints (events out)");
  webhook
    .command('add <slug> <url>')
    .description(`add an endpoint; its signing secret is shown this once (event types: ${EVENT_TYPES.join(', ')})`)
    .option('--events <types>', 'comma-separated event types (default: all)')
    .addHelpText(
      'after',
      '\nWEBHOOK_ALLOW_PRIVATE_NETWORKS is read from the environment of this command, not from the running server: to add an http:// URL, another port or a private address, set it here too (the server checks again at each delivery with its own).',
    )
    .action((slug: string, url: string, opts: { events?: string }) => addEndpointFromCli(slug, url, opts.events, json()));
  webhook
    .command('list <slug>')
    .description("list a hotel's endpoints")
    .action(async (slug: string) => {
      const { listEndpoints } = await service();
      const endpoints = await withDb(await configFromEnv(), async (db) => listEndpoints(db, (await hotelOf(db, slug)).id));
      print(json(), { endpoints }, endpoints.length ? endpoints.map(describe).join('\n') : `no webhook endpoints for ${slug}`);
    });
  webhook
    .command('remove <endpointId>')
    .description('remove an endpoint and its deliveries')
    .action(async (endpointId: string) => {
      const { removeEndpoint } = await service();
      const r = await withDb(await configFromEnv(), (db) => removeEndpoint(db, null, endpointId));
      print(json(), r, `removed webhook endpoint ${endpointId}`);
    });
  webhook
    .command('rotate-secret <endpointId>')
    .description('give an endpoint a new signing secret, shown this once; the old one keeps signing for 24 hours')
    .action(async (endpointId: string) => {
      const { rotateSecret } = await service();
      const e = await withDb(await configFromEnv(), (db) => rotateSecret(db, null, endpointId));
      print(json(), e, `${describe(e)}\n  new secret: ${e.secret}\nThe previous secret also signs until ${e.previousSecretUntil ?? ''}.`);
    });
  for (const enabled of [true, false]) {
    webhook
      .command(`${enabled ? 'enable' : 'disable'} <endpointId>`)
      .description(
        enabled
          ? 'enable an endpoint again; the running server sends its waiting deliveries in order'
          : 'disable an endpoint: nothing is sent to it until it is enabled again (its events wait)',
      )
      .action(async (endpointId: string) => {
        const { setEnabled } = await service();
        const e = await withDb(await configFromEnv(), (db) => setEnabled(db, null, endpointId, enabled));
        print(json(), { endpoint: e }, enabled ? `enabled: ${describe(e)}` : `disabled: ${describe(e)}`);
      });
  }
  webhook
    .command('test <endpointId>')
    .description('send a webhook.test event to this endpoint alone (as the Webhooks page\'s "Send a test event") and print how its delivery went')
    .option(
      '--wait <seconds>',
      `how long to wait for the running server's first attempt, 0 to queue it only (default ${TEST_WAIT_SECONDS})`,
      wholeNumber('--wait', 0, 300),
      TEST_WAIT_SECONDS,
    )
    .addHelpText(
      'after',
      '\nThe running server (innsync serve) delivers the event, signed and retried like any other, within about a second. Exit 0: the receiver answered 2xx (or, with --wait 0, the event was queued); exit 1: the attempt failed (the answer or error is printed; the server retries it) or none was made in time.',
    )
    .action((endpointId: string, opts: { wait: number }) => sendTestEventAndWait(endpointId, opts.wait, json()));
  webhook
    .command('deliveries <endpointId>')
    .description(`list an endpoint's most recent deliveries, newest first (as the Webhooks page shows them)`)
    .option('--limit <n>', `how many (1 to ${MAX_DELIVERIES}, default 20)`, wholeNumber('--limit', 1, MAX_DELIVERIES), 20)
    .action(async (endpointId: string, opts: { limit: number }) => {
      const { recentDeliveries } = await service();
      const deliveries = await withDb(await configFromEnv(), (db) => recentDeliveries(db, null, endpointId, opts.limit));
      print(json(), { deliveries }, deliveries.length ? deliveries.map(deliveryLine).join('\n') : `no deliveries yet for ${endpointId}`);
    });
}

/** `innsync webhook add`: the endpoint, judged by this command's own WEBHOOK_ALLOW_PRIVATE_NETWORKS; its secret printed this once. */
async function addEndpointFromCli(slug: string, url: string, eventList: string | undefined, asJson: boolean): Promise<void> {
  const config = await configFromEnv();
  const { addEndpoint } = await service();
  const events = eventList
    ?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const rules = { allowPrivateNetworks: config.webhookAllowPrivateNetworks, maxEndpointsPerHotel: config.webhookMaxEndpointsPerHotel };
  const e = await withDb(config, async (db) => addEndpoint(db, (await hotelOf(db, slug)).id, { url, events }, rules)).catch(async (err: unknown) => {
    throw await privateNetworkHint(err, url, rules.allowPrivateNetworks);
  });
  print(asJson, e, `${describe(e)}\n  secret: ${e.secret}\nStore the secret now: it is not shown again (rotate it with innsync webhook rotate-secret).`);
}

/** `innsync webhook test`: queues a test event for one endpoint and waits up to `wait` seconds for the running server's first attempt. */
async function sendTestEventAndWait(endpointId: string, wait: number, asJson: boolean): Promise<void> {
  const { sendTestEvent, recentDeliveries } = await service();
  const outcome = await withDb(await configFromEnv(), async (db) => {
    const { eventId } = await sendTestEvent(db, null, endpointId, 'cli');
    const deadline = Date.now() + wait * 1000;
    for (;;) {
      const d = (await recentDeliveries(db, null, endpointId, MAX_DELIVERIES)).find((x) => x.eventId === eventId) ?? null;
      if (wait === 0 || (d !== null && (d.status !== 'pending' || d.attempts > 0)) || Date.now() >= deadline) return { eventId, delivery: d };
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  const d = outcome.delivery;
  if (wait === 0 || d?.status === 'succeeded') {
    const text =
      d?.status === 'succeeded'
        ? `test event ${outcome.eventId} delivered: the endpoint answered HTTP ${d.lastStatus ?? ''}${d.lastLatencyMs !== null ? ` in ${d.lastLatencyMs} ms` : ''}`
        : `test event ${outcome.eventId} queued; the running server sends it (innsync webhook deliveries ${endpointId} shows how it went)`;
    print(asJson, outcome, text);
    return;
  }
  if (d === null || d.attempts === 0)
    throw new CliError(
      'WEBHOOK_TEST_PENDING',
      `test event ${outcome.eventId} is queued, but no delivery was attempted within ${wait} s: check that the server runs (innsync serve), then see innsync webhook deliveries ${endpointId}`,
    );
  const answer = d.lastStatus !== null ? `the endpoint answered HTTP ${d.lastStatus}` : `the delivery failed: ${d.lastError ?? 'no answer'}`;
  const then = d.status === 'pending' ? `; the server tries again${d.nextAttemptAt ? ` at ${d.nextAttemptAt}` : ''}` : '';
  throw new CliError(
    'WEBHOOK_TEST_FAILED',
    `test event ${outcome.eventId} not delivered: ${answer}${then}. Fix the receiver, then run innsync webhook test again`,
  );
}

/**
 * The command judges an endpoint URL by WEBHOOK_ALLOW_PRIVATE_NETWORKS in its own
 * environment (it cannot ask a running server, and may run without one): a URL refused
 * only for that says so, and how to set it for the command.
 */
async function privateNetworkHint(err: unknown, url: string, allowPrivate: boolean): Promise<unknown> {
  if (allowPrivate || !(err instanceof ApiError) || err.code !== 'VALIDATION_ERROR') return err;
  const { needsPrivateNetworks } = await import('../webhooks/address-guard.js');
  if (!needsPrivateNetworks(url)) return err;
  return new ApiError('VALIDATION_ERROR', {
    message: `${err.message} This command reads WEBHOOK_ALLOW_PRIVATE_NETWORKS from its own environment, not from the running server's: set it for the command too (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true innsync webhook add …).`,
    extra: err.extra,
  });
}
