import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import * as webhooks from '../../webhooks/endpoints.js';
import { EVENT_TYPES } from '../../webhooks/events.js';
import type { DashboardDeps } from '../deps.js';
import {
  DeliveriesAnswer,
  EndpointAnswer,
  EndpointRemovedAnswer,
  EndpointSecretAnswer,
  IdParams,
  ResentDeliveryAnswer,
  TestEventAnswer,
  WebhooksAnswer,
} from '../schemas.js';
import { sessionOf } from '../session.js';

const EndpointBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    events: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: EVENT_TYPES.length })),
  },
  { additionalProperties: false },
);
const DeliveryParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), deliveryId: Type.String({ minLength: 1, maxLength: 100 }) });

/** The Webhooks page, for admins: the hotel's endpoints, their recent deliveries, "Send again" and "Send a test event". */
export const webhookRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, { db, webhooks: outbox }) => {
  const hidden = { hide: true };

  app.get('/webhooks', { schema: { ...hidden, response: { 200: WebhooksAnswer } } }, async (req) => ({
    endpoints: await webhooks.listEndpoints(db, sessionOf(req).hotel.id),
    eventTypes: [...EVENT_TYPES],
  }));

  app.post('/webhooks', { schema: { ...hidden, body: EndpointBody, response: { 201: EndpointSecretAnswer } } }, async (req, reply) => {
    const endpoint = await webhooks.addEndpoint(db, sessionOf(req).hotel.id, req.body, outbox.rules);
    req.log.info({ userId: sessionOf(req).user.id, endpointId: endpoint.endpointId }, 'webhook endpoint added');
    return reply.code(201).send({ endpoint });
  });

  app.post('/webhooks/:id/remove', { schema: { ...hidden, params: IdParams, response: { 200: EndpointRemovedAnswer } } }, async (req) =>
    webhooks.removeEndpoint(db, sessionOf(req).hotel.id, req.params.id),
  );

  app.post('/webhooks/:id/rotate-secret', { schema: { ...hidden, params: IdParams, response: { 200: EndpointSecretAnswer } } }, async (req) => ({
    endpoint: await webhooks.rotateSecret(db, sessionOf(req).hotel.id, req.params.id),
  }));

  app.post('/webhooks/:id/enable', { schema: { ...hidden, params: IdParams, response: { 200: EndpointAnswer } } }, async (req) => {
    const endpoint = await webhooks.setEnabled(db, sessionOf(req).hotel.id, req.params.id, true);
    outbox.wake();
    return { endpoint };
  });

  app.post('/webhooks/:id/disable', { schema: { ...hidden, params: IdParams, response: { 200: EndpointAnswer } } }, async (req) => ({
    endpoint: await webhooks.setEnabled(db, sessionOf(req).hotel.id, req.params.id, false),
  }));

  app.post('/webhooks/:id/test', { schema: { ...hidden, params: IdParams, response: { 200: TestEventAnswer } } }, async (req) => {
    const sent = await webhooks.sendTestEvent(db, sessionOf(req).hotel.id, req.params.id);
    outbox.wake();
    return sent;
  });

  app.get('/webhooks/:id/deliveries', { schema: { ...hidden, params: IdParams, response: { 200: DeliveriesAnswer } } }, async (req) => ({
    deliveries: await webhooks.recentDeliveries(db, sessionOf(req).hotel.id, req.params.id),
  }));

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/resend',
    { schema: { ...hidden, params: DeliveryParams, response: { 200: ResentDeliveryAnswer } } },
    async (req) => {
      const queued = await webhooks.resendDelivery(db, sessionOf(req).hotel.id, req.params.id, req.params.deliveryId);
      outbox.wake();
      return queued;
    },
  );
};
