import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { organization } from './records.js';

/** Conformance cases of the `images` area. */
export function imageCases(test: StoreCase) {
  test('images: insert keeps the first copy; get is scoped to the organization', async ({ store, reopen }) => {
    const image = { id: `img_${'c'.repeat(32)}`, organizationId: 'org_1', mediaType: 'image/png', bytes: 10, width: 2, height: 3, createdAt: iso(T0) };
    await store.images.insert({ image });
    await store.images.insert({ image: { ...image, createdAt: iso(T0 + 1) } });
    expect(await store.images.get({ organizationId: 'org_1', imageId: image.id })).toEqual(image);
    expect(await store.images.get({ organizationId: 'org_2', imageId: image.id })).toBeNull();
    if (reopen) expect(await (await reopen()).images.get({ organizationId: 'org_1', imageId: image.id })).toEqual(image);
  });

  test('images: list pages through an organization\'s images in id order, none of another organization', async ({ store }) => {
    const image = (char: string, organizationId = 'org_1') => ({ id: `img_${char.repeat(32)}`, organizationId, mediaType: 'image/png', bytes: 10, width: 2, height: 3, createdAt: iso(T0) });
    for (const record of [image('c'), image('a'), image('e'), image('b', 'org_2'), image('d')]) await store.images.insert({ image: record });
    const ids = (records: { id: string }[]) => records.map((record) => record.id.slice(4, 5));
    expect(ids(await store.images.list({ organizationId: 'org_1', limit: 10 }))).toEqual(['a', 'c', 'd', 'e']);
    expect(ids(await store.images.list({ organizationId: 'org_1', limit: 2 }))).toEqual(['a', 'c']);
    expect(ids(await store.images.list({ organizationId: 'org_1', afterId: image('c').id, limit: 2 }))).toEqual(['d', 'e']);
    expect(ids(await store.images.list({ organizationId: 'org_1', afterId: image('e').id, limit: 2 }))).toEqual([]);
    expect(await store.images.list({ organizationId: 'org_2', limit: 10 })).toEqual([image('b', 'org_2')]);
    expect(await store.images.list({ organizationId: 'org_3', limit: 10 })).toEqual([]);
  });
}
