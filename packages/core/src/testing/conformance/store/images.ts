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
}
