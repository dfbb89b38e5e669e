import { expect } from 'vitest';
import type { Store, WebhookEndpointRecord, WebhookEvent, WebhookEventType } from '../../../ports/store/index.js';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';

let counter = 0;
const ulidish = () => String(++counter).padStart(26, '0');

function endpoint(organizationId: string, overrides: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord {
  return {
    id: `whk_${ulidish()}`,
    organizationId,
    url: 'https://hooks.example.com/in',
    description: null,
    events: ['observation.committed', 'observation.failed'],
    secret: 'whsec_one',
    previousSecret: null,
    previousSecretExpiresAt: null,
    enabled: true,
    disabledReason: null,
    consecutiveFailures: 0,
    createdAt: iso(T0 + counter),
    updatedAt: iso(T0 + counter),
    ...overrides,
  };
}

function event(organizationId: string, overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  const id = `evt_${ulidish()}`;
  const type: WebhookEventType = overrides.type ?? 'observation.committed';
  return { id, organizationId, type, orderingKey: 'thread_a', body: JSON.stringify({ id, type }), createdAt: iso(T0), ...overrides };
}

const failedAttempt = (attempts: number) => ({
  status: 'pending' as const,
  attempts,
  nextAttemptAt: T0 + 1000,
  lastStatusCode: 500,
  lastError: 'The receiver answered 500.',
  lastAttemptAt: iso(T0),
});
const delivered = (attempts: number) => ({ status: 'delivered' as const, attempts, nextAttemptAt: T0, lastStatusCode: 200, lastError: null, lastAttemptAt: iso(T0) });
const finish = (store: Store, deliveryId: string, holder: string, succeeded: boolean, attempts = 1, disableAfter = 100) =>
  store.webhooks.finishAttempt({
    deliveryId,
    holder,
    succeeded,
    patch: succeeded ? delivered(attempts) : failedAttempt(attempts),
    disableAfter,
    disabledReason: 'Too many failures.',
    updatedAt: iso(T0 + 5),
  });

/** Conformance cases of the `webhooks` area. */
export function webhookCases(test: StoreCase) {
  test('webhooks: endpoints are scoped to their organization; update and delete change only its own', async ({ store, reopen }) => {
    const first = endpoint('org_w1');
    const second = endpoint('org_w1', { events: ['upload.finished'] });
    await store.webhooks.insertEndpoint({ endpoint: first });
    await store.webhooks.insertEndpoint({ endpoint: second });
    expect(await store.webhooks.getEndpoint({ organizationId: 'org_w1', endpointId: first.id })).toEqual(first);
    expect(await store.webhooks.getEndpoint({ organizationId: 'org_w2', endpointId: first.id })).toBeNull();
    expect((await store.webhooks.listEndpoints({ organizationId: 'org_w1' })).map((e) => e.id)).toEqual([first.id, second.id]);
    expect(await store.webhooks.listEndpoints({ organizationId: 'org_w2' })).toEqual([]);
    expect(await store.webhooks.updateEndpoint({ organizationId: 'org_w2', endpointId: first.id, patch: { enabled: false } })).toBeNull();
    const updated = await store.webhooks.updateEndpoint({
      organizationId: 'org_w1',
      endpointId: first.id,
      patch: { url: 'https://other.example.com/', previousSecret: 'whsec_one', previousSecretExpiresAt: T0 + 60_000, secret: 'whsec_two' },
    });
    expect(updated).toEqual({ ...first, url: 'https://other.example.com/', previousSecret: 'whsec_one', previousSecretExpiresAt: T0 + 60_000, secret: 'whsec_two' });
    if (reopen) expect(await (await reopen()).webhooks.getEndpoint({ organizationId: 'org_w1', endpointId: first.id })).toEqual(updated);
    expect(await store.webhooks.deleteEndpoint({ organizationId: 'org_w2', endpointId: first.id })).toBe(false);
    expect(await store.webhooks.deleteEndpoint({ organizationId: 'org_w1', endpointId: first.id })).toBe(true);
    expect(await store.webhooks.getEndpoint({ organizationId: 'org_w1', endpointId: first.id })).toBeNull();
  });

  test('webhooks: enqueue fans an event out to the endpoints subscribed to it, disabled ones too, once per event id', async ({ store }) => {
    const subscribed = endpoint('org_w3');
    const other = endpoint('org_w3', { events: ['upload.finished'] });
    const disabled = endpoint('org_w3', { enabled: false, disabledReason: 'off' });
    const foreign = endpoint('org_w4');
    for (const e of [subscribed, other, disabled, foreign]) await store.webhooks.insertEndpoint({ endpoint: e });
    const sent = event('org_w3');
    expect(await store.webhooks.enqueue({ event: sent, now: T0 })).toBe(2);
    expect(await store.webhooks.enqueue({ event: sent, now: T0 })).toBe(0);
    // The disabled endpoint's delivery waits: not claimed until the endpoint is re-enabled.
    expect((await store.webhooks.listDeliveries({ organizationId: 'org_w3', endpointId: disabled.id, limit: 10 })).map((d) => [d.eventId, d.status])).toEqual([[sent.id, 'pending']]);
    const claimed = await store.webhooks.claim({ holder: 'a', now: T0, leaseMs: 30_000, limit: 10, perEndpoint: 100 });
    expect(claimed.map((c) => c.endpoint.id)).toEqual([subscribed.id]);
    await store.webhooks.updateEndpoint({ organizationId: 'org_w3', endpointId: disabled.id, patch: { enabled: true, disabledReason: null } });
    const resumed = await store.webhooks.claim({ holder: 'a', now: T0, leaseMs: 30_000, limit: 10, perEndpoint: 100 });
    expect(resumed.map((c) => [c.endpoint.id, c.delivery.eventId])).toEqual([[disabled.id, sent.id]]);
    const [delivery] = await store.webhooks.listDeliveries({ organizationId: 'org_w3', endpointId: subscribed.id, limit: 10 });
    expect(delivery).toMatchObject({ endpointId: subscribed.id, eventId: sent.id, eventType: 'observation.committed', body: sent.body, status: 'pending', attempts: 0, nextAttemptAt: T0 });
    expect(await store.webhooks.listDeliveries({ organizationId: 'org_w3', endpointId: other.id, limit: 10 })).toEqual([]);
    expect(await store.webhooks.listDeliveries({ organizationId: 'org_w4', endpointId: subscribed.id, limit: 10 })).toEqual([]);
  });

  test('webhooks: claim keeps each ordering key in order, waits for the due time, and skips disabled endpoints', async ({ store }) => {
    const target = endpoint('org_w5');
    await store.webhooks.insertEndpoint({ endpoint: target });
    const first = event('org_w5', { orderingKey: 'thread_a' });
    const second = event('org_w5', { orderingKey: 'thread_a' });
    const elsewhere = event('org_w5', { orderingKey: 'thread_b' });
    for (const e of [first, second, elsewhere]) await store.webhooks.enqueue({ event: e, now: T0 });

    const claimed = await store.webhooks.claim({ holder: 'a', now: T0, leaseMs: 30_000, limit: 10, perEndpoint: 100 });
    expect(claimed.map((c) => c.delivery.eventId)).toEqual([first.id, elsewhere.id]);
    expect(claimed[0]!.endpoint).toEqual(target);
    // Nothing more while both are claimed.
    expect(await store.webhooks.claim({ holder: 'b', now: T0 + 1, leaseMs: 30_000, limit: 10, perEndpoint: 100 })).toEqual([]);

    // A failed attempt keeps the key's head pending: the second waits for its retry.
    expect(await finish(store, claimed[0]!.delivery.id, 'a', false)).toBe(true);
    expect(await store.webhooks.claim({ holder: 'b', now: T0 + 2, leaseMs: 30_000, limit: 10, perEndpoint: 100 })).toEqual([]);
    const retried = await store.webhooks.claim({ holder: 'b', now: T0 + 1000, leaseMs: 30_000, limit: 10, perEndpoint: 100 });
    expect(retried.map((c) => [c.delivery.eventId, c.delivery.attempts])).toEqual([[first.id, 1]]);
    expect(await finish(store, retried[0]!.delivery.id, 'b', true, 2)).toBe(true);
    const next = await store.webhooks.claim({ holder: 'b', now: T0 + 1001, leaseMs: 30_000, limit: 10, perEndpoint: 100 });
    expect(next.map((c) => c.delivery.eventId)).toEqual([second.id]);

    // A claim whose holder vanished is taken again once it expires.
    expect((await store.webhooks.claim({ holder: 'c', now: T0 + 40_000, leaseMs: 30_000, limit: 10, perEndpoint: 100 })).map((c) => c.delivery.eventId).sort()).toEqual([second.id, elsewhere.id].sort());
    // The stale holder's outcome is refused.
    expect(await finish(store, next[0]!.delivery.id, 'b', true)).toBe(false);

    await store.webhooks.updateEndpoint({ organizationId: 'org_w5', endpointId: target.id, patch: { enabled: false } });
    expect(await store.webhooks.claim({ holder: 'd', now: T0 + 100_000, leaseMs: 30_000, limit: 10, perEndpoint: 100 })).toEqual([]);
  });

  test('webhooks: a claim takes at most perEndpoint deliveries of one endpoint at a time, counting the claims still running', async ({ store }) => {
    const slow = endpoint('org_w10', { events: ['observation.committed'] });
    const fast = endpoint('org_w10', { events: ['observation.failed'] });
    for (const e of [slow, fast]) await store.webhooks.insertEndpoint({ endpoint: e });
    // Five threads' events for the slow endpoint first, then one for the fast one.
    for (let i = 0; i < 5; i++) await store.webhooks.enqueue({ event: event('org_w10', { orderingKey: `slow_${i}` }), now: T0 });
    await store.webhooks.enqueue({ event: event('org_w10', { orderingKey: 'fast', type: 'observation.failed' }), now: T0 });
    const first = await store.webhooks.claim({ holder: 'a', now: T0, leaseMs: 30_000, limit: 3, perEndpoint: 2 });
    expect(first.map((c) => c.endpoint.id)).toEqual([slow.id, slow.id, fast.id]);
    // Two of the slow endpoint's claims are running (another holder's count too): none more for it.
    expect(await store.webhooks.claim({ holder: 'b', now: T0 + 1, leaseMs: 30_000, limit: 10, perEndpoint: 2 })).toEqual([]);
    expect(await finish(store, first[0]!.delivery.id, 'a', true)).toBe(true);
    const next = await store.webhooks.claim({ holder: 'b', now: T0 + 2, leaseMs: 30_000, limit: 10, perEndpoint: 2 });
    expect(next.map((c) => c.endpoint.id)).toEqual([slow.id]);
    // Expired claims no longer count (and their deliveries are claimed again, oldest first).
    const later = await store.webhooks.claim({ holder: 'c', now: T0 + 40_000, leaseMs: 30_000, limit: 10, perEndpoint: 2 });
    expect(later.map((c) => [c.endpoint.id, c.delivery.orderingKey])).toEqual([[slow.id, 'slow_1'], [slow.id, 'slow_2'], [fast.id, 'fast']]);
  });

  test('webhooks: concurrent claims hand each delivery to one holder', async ({ store }) => {
    const target = endpoint('org_w6');
    await store.webhooks.insertEndpoint({ endpoint: target });
    for (let i = 0; i < 12; i++) await store.webhooks.enqueue({ event: event('org_w6', { orderingKey: `thread_${i}` }), now: T0 });
    const claims = await Promise.all(Array.from({ length: 4 }, (_, i) => store.webhooks.claim({ holder: `h${i}`, now: T0, leaseMs: 30_000, limit: 5, perEndpoint: 100 })));
    const ids = claims.flat().map((c) => c.delivery.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(12);
  });

  test('webhooks: failed attempts count on the endpoint, a success resets them, and the Nth disables it', async ({ store, reopen }) => {
    const target = endpoint('org_w7');
    await store.webhooks.insertEndpoint({ endpoint: target });
    const attempt = async (succeeded: boolean, now: number) => {
      await store.webhooks.enqueue({ event: event('org_w7', { orderingKey: `k${now}` }), now });
      const [claimed] = await store.webhooks.claim({ holder: 'a', now, leaseMs: 1000, limit: 1, perEndpoint: 100 });
      return finish(store, claimed!.delivery.id, 'a', succeeded, 1, 3);
    };
    await attempt(false, T0);
    await attempt(false, T0 + 10);
    expect((await store.webhooks.getEndpoint({ organizationId: 'org_w7', endpointId: target.id }))!.consecutiveFailures).toBe(2);
    await attempt(true, T0 + 20);
    expect((await store.webhooks.getEndpoint({ organizationId: 'org_w7', endpointId: target.id }))!.consecutiveFailures).toBe(0);
    await attempt(false, T0 + 30);
    await attempt(false, T0 + 40);
    expect((await store.webhooks.getEndpoint({ organizationId: 'org_w7', endpointId: target.id }))!.enabled).toBe(true);
    await attempt(false, T0 + 50);
    const disabled = await (reopen ? await reopen() : store).webhooks.getEndpoint({ organizationId: 'org_w7', endpointId: target.id });
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'Too many failures.', consecutiveFailures: 3 });
  });

  test('webhooks: the delivery log is newest first, pages by seq, and goes with its endpoint', async ({ store }) => {
    const target = endpoint('org_w8');
    await store.webhooks.insertEndpoint({ endpoint: target });
    const events = [event('org_w8'), event('org_w8'), event('org_w8')];
    for (const e of events) await store.webhooks.enqueue({ event: e, now: T0 });
    const page = await store.webhooks.listDeliveries({ organizationId: 'org_w8', endpointId: target.id, limit: 2 });
    expect(page.map((d) => d.eventId)).toEqual([events[2]!.id, events[1]!.id]);
    const rest = await store.webhooks.listDeliveries({ organizationId: 'org_w8', endpointId: target.id, limit: 2, beforeSeq: page[1]!.seq });
    expect(rest.map((d) => d.eventId)).toEqual([events[0]!.id]);
    await store.webhooks.deleteEndpoint({ organizationId: 'org_w8', endpointId: target.id });
    expect(await store.webhooks.claim({ holder: 'a', now: T0, leaseMs: 1000, limit: 10, perEndpoint: 100 })).toEqual([]);
  });

  test('webhooks: pruning deletes finished deliveries created before the cut-off, never pending ones', async ({ store }) => {
    const target = endpoint('org_w9');
    await store.webhooks.insertEndpoint({ endpoint: target });
    const old = [event('org_w9', { orderingKey: 'a', createdAt: iso(T0) }), event('org_w9', { orderingKey: 'b', createdAt: iso(T0) })];
    const recent = event('org_w9', { orderingKey: 'c', createdAt: iso(T0 + 10_000) });
    for (const e of [...old, recent]) await store.webhooks.enqueue({ event: e, now: T0 });
    const claimed = await store.webhooks.claim({ holder: 'a', now: T0, leaseMs: 1000, limit: 10, perEndpoint: 100 });
    // The first old one and the recent one finish; the second old one stays pending.
    for (const item of claimed) if (item.delivery.eventId !== old[1]!.id) await finish(store, item.delivery.id, 'a', true);
    expect(await store.webhooks.pruneDeliveries({ before: iso(T0 + 5000), limit: 100 })).toBe(1);
    const left = await store.webhooks.listDeliveries({ organizationId: 'org_w9', endpointId: target.id, limit: 10 });
    expect(left.map((d) => d.eventId).sort()).toEqual([old[1]!.id, recent.id].sort());
  });

  test('webhooks: pruning also drops what a disabled endpoint kept past the cut-off, and nothing an enabled one waits for', async ({ store }) => {
    const paused = endpoint('org_w11', { enabled: false, disabledReason: 'Disabled by the organization.' });
    const live = endpoint('org_w11');
    for (const e of [paused, live]) await store.webhooks.insertEndpoint({ endpoint: e });
    const old = event('org_w11', { orderingKey: 'a', createdAt: iso(T0) });
    const recent = event('org_w11', { orderingKey: 'b', createdAt: iso(T0 + 10_000) });
    for (const e of [old, recent]) await store.webhooks.enqueue({ event: e, now: T0 });
    // Each event is pending for both endpoints; only the disabled one's old delivery goes.
    expect(await store.webhooks.pruneDeliveries({ before: iso(T0 + 5000), limit: 100 })).toBe(1);
    expect((await store.webhooks.listDeliveries({ organizationId: 'org_w11', endpointId: paused.id, limit: 10 })).map((d) => d.eventId)).toEqual([recent.id]);
    expect((await store.webhooks.listDeliveries({ organizationId: 'org_w11', endpointId: live.id, limit: 10 })).map((d) => d.eventId)).toEqual([recent.id, old.id]);
  });
}
