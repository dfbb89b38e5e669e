import { createCanvas } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockLanguageModel } from '@memory-agents/core/testing';
import { agentWithThread, postForm, startInProcess, type InProcess } from './document-support.js';

/** A real encoded image of the given size. */
async function image(format: 'png' | 'jpeg' | 'webp', width: number, height: number, shade = 0): Promise<Uint8Array> {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = `rgb(${shade}, 120, 200)`;
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#000';
  context.fillText('hello', 2, 10);
  return new Uint8Array(format === 'png' ? await canvas.encode('png') : format === 'jpeg' ? await canvas.encode('jpeg', 80) : await canvas.encode('webp', 80));
}

describe('POST /v1/images and chat images (in-process server)', () => {
  let app: InProcess;
  const model = mockLanguageModel();

  beforeAll(async () => {
    app = await startInProcess({ model }, { maxImageBytes: 300_000, maxImageBytesPerTurn: 400_000 });
  });
  afterAll(async () => app.close());

  const uploadImage = (data: Uint8Array, filename = 'picture.bin') => postForm(app.url, app.key, '/v1/images', { data, filename });

  for (const [format, mediaType] of [['png', 'image/png'], ['jpeg', 'image/jpeg'], ['webp', 'image/webp']] as const) {
    it(`${format}: 201 with media type by magic bytes (not the filename) and the size from the header`, async () => {
      const data = await image(format, 37, 21);
      const created = await uploadImage(data, 'named-wrong.gif');
      expect(created.status, created.text).toBe(201);
      expect(created.body).toEqual({ image_id: expect.stringMatching(/^img_[0-9a-f]{32}$/), media_type: mediaType, bytes: data.length, width: 37, height: 21 });
      // Same bytes, same organization: the same id.
      expect((await uploadImage(data)).body.image_id).toBe(created.body.image_id);
    });
  }

  it('422 for anything that is not PNG, JPEG or WebP; 413 payload_too_large past the image limit while streaming', async () => {
    const gif = new TextEncoder().encode('GIF89a\x01\x00\x01\x00\x00\x00\x00;');
    const refused = await uploadImage(gif, 'a.png');
    expect([refused.status, refused.body.code]).toEqual([422, 'invalid_request']);
    const big = new Uint8Array(400_000);
    big.set(await image('png', 4, 4));
    const tooBig = await uploadImage(big);
    expect([tooBig.status, tooBig.body.code]).toEqual([413, 'payload_too_large']);
    const none = await postForm(app.url, app.key, '/v1/images', null, {});
    expect(none.status).toBe(422);
  });

  it('chat passes uploaded images to the model; unknown ids 404; more than the per-turn count or bytes 413', async () => {
    const { paths } = await agentWithThread(app.api);
    const png = await image('png', 40, 30);
    const id = (await uploadImage(png)).body.image_id;
    const answered = await app.api.post(paths.chat, { turn_id: 'img-1', message: 'What is in the picture?', images: [id, id] });
    expect(answered.status, answered.text).toBe(200);
    const user = model.generateCalls.at(-1)!.messages.find((message) => message.role === 'user')!;
    expect(user.images).toHaveLength(1);
    expect(user.images![0]).toMatchObject({ mediaType: 'image/png' });
    expect(new Uint8Array(user.images![0]!.data)).toEqual(png);

    const unknown = await app.api.post(paths.chat, { turn_id: 'img-2', message: 'And this?', images: [`img_${'0'.repeat(32)}`] });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);

    const eleven = Array.from({ length: 11 }, (_, i) => `img_${i.toString(16).padStart(32, '0')}`);
    const tooMany = await app.api.post(paths.chat, { turn_id: 'img-3', message: 'All of them?', images: eleven });
    expect([tooMany.status, tooMany.body.code]).toEqual([413, 'payload_too_large']);

    const heavy: string[] = [];
    for (let i = 0; i < 3; i++) {
      const data = new Uint8Array(180_000);
      data.set(await image('png', 8, 8, i * 40));
      const created = await uploadImage(data);
      expect(created.status, created.text).toBe(201);
      heavy.push(created.body.image_id);
    }
    const tooHeavy = await app.api.post(paths.chat, { turn_id: 'img-4', message: 'Compare them.', images: heavy });
    expect([tooHeavy.status, tooHeavy.body.code]).toEqual([413, 'payload_too_large']);
  });

  it('image ids are scoped to the organization', async () => {
    const other = await startInProcess();
    try {
      const id = (await uploadImage(await image('jpeg', 10, 10))).body.image_id;
      const { paths } = await agentWithThread(other.api);
      const chat = await other.api.post(paths.chat, { turn_id: 'x', message: 'see?', images: [id] });
      expect(chat.status).toBe(404);
    } finally {
      await other.close();
    }
  });
});
