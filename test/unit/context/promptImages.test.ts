import { describe, expect, it } from 'vitest';
import { MAX_PROMPT_IMAGES, promptImageFromData, sniffImageType, tooManyImages } from '../../../src/core/context/promptImages';
import { parseFromWebview } from '../../../src/shared/protocol/fromWebview';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('images attached to a prompt', () => {
  it('are told apart by their first bytes, not their names', () => {
    expect(sniffImageType(Buffer.from(PNG, 'base64'))).toBe('image/png');
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a...'))).toBe('image/gif');
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
  });

  it('from the composer: checked like a file, with what is wrong in words', () => {
    const ok = promptImageFromData('pixel.jpg', PNG);
    expect(ok.ok && ok.image.info).toEqual({ name: 'pixel.jpg', mediaType: 'image/png', bytes: 70 });
    expect(promptImageFromData('x.png', 'not base64!')).toEqual({ ok: false, problem: 'the image x.png is not valid base64 data' });
    expect(promptImageFromData('x.svg', Buffer.from('<svg/>').toString('base64'))).toMatchObject({ ok: false, problem: 'x.svg is not a PNG, JPEG, GIF or WebP image' });
    expect(tooManyImages(MAX_PROMPT_IMAGES + 1)).toMatch(/at most 20/);
    expect(parseFromWebview({ type: 'prompt', text: 'look', images: [{ name: 'a.png', data: PNG }] }).ok).toBe(true);
  });
});
