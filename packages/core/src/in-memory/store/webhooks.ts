import { copy, type State } from './state.js';
import type { WebhookDeliveryRecord, WebhookStore } from '../../ports/store/index.js';

type StoredDelivery = State['webhooks']['deliveries'] extends Map<string, infer D> ? D : never;

/** Public part of a stored delivery (without its claim). */
function toDelivery({ claimedBy: _claimedBy, claimExpiresAt: _claimExpiresAt, ...delivery }: StoredDelivery): WebhookDeliveryRecord {
  return copy(delivery);
}

/** Webhook endpoints and deliveries in process memory. */
export function inMemoryWebhooks(get: () => State): WebhookStore {
  const owned = (organizationId: string, endpointId: string) => {
    const endpoint = get().webhooks.endpoints.get(endpointId);
    return endpoint && endpoint.organizationId === organizationId ? endpoint : null;
  };
  return {
    async insertEndpoint({ endpoint }) {
      get().webhooks.endpoints.set(endpoint.id, copy(endpoint));
    },
    async getEndpoint({ organizationId, endpointId }) {
      const endpoint = owned(organizationId, endpointId);
      return endpoint ? copy(endpoint) : null;
    },
    async listEndpoints({ organizationId }) {
      return [...get().webhooks.endpoints.values()]
        .filter((endpoint) => endpoint.organizationId === organizationId)
        .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1))
        .map(copy);
    },
    async updateEndpoint({ organizationId, endpointId, patch }) {
      const endpoint = owned(organizationId, endpointId);
      if (!endpoint) return null;
      Object.assign(endpoint, copy(patch));
      return copy(endpoint);
    },
    async deleteEndpoint({ organizationId, endpointId }) {
      if (!owned(organizationId, endpointId)) return false;
      const { endpoints, deliveries } = get().webhooks;
      endpoints.delete(endpointId);
      for (const [id, delivery] of deliveries) if (delivery.endpointId === endpointId) deliveries.delete(id);
      return true;
    },
    async enqueue({ event, now }) {
      const webhooks = get().webhooks;
      let added = 0;
      for (const endpoint of webhooks.endpoints.values()) {
        // Disabled endpoints too: their deliveries wait until they are re-enabled.
        if (endpoint.organizationId !== event.organizationId || !endpoint.events.includes(event.type)) continue;
        const id = `whd_${event.id.slice(4)}_${endpoint.id.slice(4)}`;
        if (webhooks.deliveries.has(id)) continue;
        webhooks.deliveries.set(id, {
          id,
          organizationId: event.organizationId,
          endpointId: endpoint.id,
          eventId: event.id,
          eventType: event.type,
          orderingKey: event.orderingKey,
          body: event.body,
          status: 'pending',
          attempts: 0,
          nextAttemptAt: now,
          lastStatusCode: null,
          lastError: null,
          lastAttemptAt: null,
          seq: ++webhooks.sequence,
          createdAt: event.createdAt,
          claimedBy: null,
          claimExpiresAt: 0,
        });
        added += 1;
      }
      return added;
    },
    async claim({ holder, now, leaseMs, limit, perEndpoint }) {
      const { endpoints, deliveries } = get().webhooks;
      const pending = [...deliveries.values()].filter((delivery) => delivery.status === 'pending').sort((a, b) => a.seq - b.seq);
      // Claims still running, per endpoint (any holder): at most `perEndpoint` at a time.
      const running = new Map<string, number>();
      for (const delivery of pending) {
        if (delivery.claimedBy !== null && delivery.claimExpiresAt > now) running.set(delivery.endpointId, (running.get(delivery.endpointId) ?? 0) + 1);
      }
      const heads = new Set<string>();
      const claimed = [];
      for (const delivery of pending) {
        // Only the first pending delivery of an endpoint and key may go out (per-key order).
        const key = `${delivery.endpointId}\0${delivery.orderingKey}`;
        if (heads.has(key)) continue;
        heads.add(key);
        const endpoint = endpoints.get(delivery.endpointId);
        if (!endpoint?.enabled || delivery.nextAttemptAt > now) continue;
        if (delivery.claimedBy !== null && delivery.claimExpiresAt > now) continue;
        if ((running.get(delivery.endpointId) ?? 0) >= perEndpoint) continue;
        running.set(delivery.endpointId, (running.get(delivery.endpointId) ?? 0) + 1);
        delivery.claimedBy = holder;
        delivery.claimExpiresAt = now + leaseMs;
        claimed.push({ delivery: toDelivery(delivery), endpoint: copy(endpoint) });
        if (claimed.length >= limit) break;
      }
      return claimed;
    },
    async finishAttempt({ deliveryId, holder, succeeded, patch, disableAfter, disabledReason, updatedAt }) {
      const { endpoints, deliveries } = get().webhooks;
      const delivery = deliveries.get(deliveryId);
      if (!delivery || delivery.claimedBy !== holder) return false;
      Object.assign(delivery, copy(patch), { claimedBy: null, claimExpiresAt: 0 });
      const endpoint = endpoints.get(delivery.endpointId);
      if (endpoint) {
        endpoint.consecutiveFailures = succeeded ? 0 : endpoint.consecutiveFailures + 1;
        if (!succeeded && endpoint.enabled && endpoint.consecutiveFailures >= disableAfter) {
          endpoint.enabled = false;
          endpoint.disabledReason = disabledReason;
          endpoint.updatedAt = updatedAt;
        }
      }
      return true;
    },
    async pruneDeliveries({ before, limit }) {
      const { endpoints, deliveries } = get().webhooks;
      // Finished ones, and those kept for a disabled endpoint past the retention.
      const expired = (d: StoredDelivery) => d.status !== 'pending' || endpoints.get(d.endpointId)?.enabled === false;
      const finished = [...deliveries.values()].filter((d) => expired(d) && d.createdAt < before).sort((a, b) => a.seq - b.seq).slice(0, limit);
      for (const delivery of finished) deliveries.delete(delivery.id);
      return finished.length;
    },
    async listDeliveries({ organizationId, endpointId, limit, beforeSeq }) {
      if (!owned(organizationId, endpointId)) return [];
      return [...get().webhooks.deliveries.values()]
        .filter((delivery) => delivery.endpointId === endpointId && (beforeSeq === undefined || delivery.seq < beforeSeq))
        .sort((a, b) => b.seq - a.seq)
        .slice(0, limit)
        .map(toDelivery);
    },
  };
}
