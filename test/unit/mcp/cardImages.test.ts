import { describe, expect, it } from 'vitest';
import { cardContent } from '../../../src/core/mcp/wiring';
import type { ImageBlock, ToolResultContentBlock } from '../../../src/shared/domain/messages';
import { checkCardImage, isCardImageSrc, MAX_CARD_IMAGE_BYTES, MAX_CARD_IMAGES } from '../../../src/shared/domain/toolImages';
import { applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';
import { taskEventSchema } from '../../../src/shared/protocol/domainSchemas';

/**
 * What an MCP tool's images may become in the chat's tool card: only checked PNG, JPEG, GIF or
 * WebP data, as a data: URL the host builds; anything else is named with the reason, never shown.
 */

// A real 1×1 PNG, JPEG header, GIF and WebP headers (the check reads the leading bytes).
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const b64 = (bytes: number[] | string) => Buffer.from(typeof bytes === 'string' ? bytes : Uint8Array.from(bytes)).toString('base64');
const JPEG = b64([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
const GIF = b64('GIF89a\x01\x00\x01\x00\x00\x00\x00;');
const WEBP = b64('RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00');

const image = (media_type: string, data: string): ImageBlock => ({ type: 'image', source: { type: 'base64', media_type: media_type as ImageBlock['source']['media_type'], data } });

describe('checkCardImage', () => {
  it('builds a data: URL for each allowed type whose bytes are that type', () => {
    for (const [type, data] of [['image/png', PNG], ['image/jpeg', JPEG], ['image/gif', GIF], ['image/webp', WEBP]] as const) {
      const r = checkCardImage(type, data, 'tiny');
      expect(r).toEqual({ ok: true, image: { src: `data:${type};base64,${data}`, alt: 'tiny' } });
      if (r.ok) expect(isCardImageSrc(r.image.src)).toBe(true);
    }
  });

  it('refuses a type that is not a raster image the card shows (SVG can carry script)', () => {
    for (const type of ['image/svg+xml', 'text/html', 'image/png;charset=x', 'IMAGE/PNG', 'image/bmp', '']) {
      const r = checkCardImage(type, PNG, 'x');
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/is not PNG, JPEG, GIF or WebP/);
    }
  });

  it('refuses data that is not strict base64', () => {
    for (const data of ['', 'not base64!', `${PNG.slice(0, 20)}\n${PNG.slice(20)}`, PNG.slice(0, -1), `${PNG}=`, '"><script>alert(1)</script>', 'data:image/png;base64,AAAA']) {
      const r = checkCardImage('image/png', data, 'x');
      expect(r.ok, data).toBe(false);
      if (!r.ok) expect(r.reason).toBe('its data is not valid base64');
    }
  });

  it('refuses an image over the size cap (the model still gets it; the card names it)', () => {
    const png = (size: number) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(size - 8)]).toString('base64');
    const big = png(MAX_CARD_IMAGE_BYTES + 1);
    const r = checkCardImage('image/png', big, 'x');
    expect(r).toEqual({ ok: false, reason: `larger than ${MAX_CARD_IMAGE_BYTES / 1024} KB` });
    expect(checkCardImage('image/png', png(MAX_CARD_IMAGE_BYTES), 'x').ok).toBe(true);
  });

  it('refuses bytes that are not the type the server claims', () => {
    expect(checkCardImage('image/png', JPEG, 'x')).toEqual({ ok: false, reason: 'its data is not a PNG image' });
    expect(checkCardImage('image/jpeg', b64('<svg onload=alert(1)>'), 'x')).toEqual({ ok: false, reason: 'its data is not a JPEG image' });
    expect(checkCardImage('image/webp', b64('RIFF\x1a\x00\x00\x00WAVEfmt '), 'x').ok).toBe(false);
  });

  it('isCardImageSrc accepts only what checkCardImage builds: never a server URL', () => {
    for (const src of [
      'https://evil.example/x.png',
      'http://127.0.0.1/x.png',
      'javascript:alert(1)',
      `data:image/svg+xml;base64,${b64('<svg/>')}`,
      `data:image/png,${PNG}`,
      `data:image/png;base64,${JPEG}`,
      `data:image/png;base64,${PNG} `,
      ` data:image/png;base64,${PNG}`,
    ]) {
      expect(isCardImageSrc(src), src).toBe(false);
    }
  });
});

describe('the tool card of an MCP result', () => {
  it('shows the images that pass and names the others with the reason', () => {
    const content: ToolResultContentBlock[] = [
      { type: 'text', text: 'Here:' },
      image('image/png', PNG),
      image('image/png', 'not base64!'),
      image('image/svg+xml', b64('<svg/>')),
    ];
    const card = cardContent(content);
    expect(card.images).toEqual([{ src: `data:image/png;base64,${PNG}`, alt: 'image 1 (image/png, about 0 KB)' }]);
    expect(card.text).toContain('Here:');
    expect(card.text).toContain('[image image/png, about 0 KB, sent to the model; shown below]');
    expect(card.text).toContain('not shown here: its data is not valid base64]');
    expect(card.text).toContain('not shown here: type "image/svg+xml" is not PNG, JPEG, GIF or WebP]');
  });

  it(`shows at most ${MAX_CARD_IMAGES} images; the rest are named`, () => {
    const card = cardContent(Array.from({ length: MAX_CARD_IMAGES + 2 }, () => image('image/png', PNG)));
    expect(card.images).toHaveLength(MAX_CARD_IMAGES);
    expect(card.text.match(/not shown here: at most/g)).toHaveLength(2);
  });

  it('the webview protocol refuses an image event whose URL the host did not check', () => {
    const ok = { type: 'tool_images', taskId: 't', id: 'c', images: [{ src: `data:image/png;base64,${PNG}`, alt: 'a' }] };
    expect(taskEventSchema.safeParse(ok).success).toBe(true);
    for (const src of ['https://evil.example/x.png', `data:image/svg+xml;base64,${b64('<svg/>')}`, 'data:image/png;base64,!!!!']) {
      expect(taskEventSchema.safeParse({ ...ok, images: [{ src, alt: 'a' }] }).success, src).toBe(false);
    }
  });

  it('the transcript keeps the images on the tool item', () => {
    let t = emptyTranscript('t', '', 'm');
    t = applyTaskEvent(t, { type: 'tool_call', taskId: 't', id: 'c', name: 'mcp__everything__get-tiny-image', input: {} });
    t = applyTaskEvent(t, { type: 'tool_images', taskId: 't', id: 'c', images: [{ src: `data:image/png;base64,${PNG}`, alt: 'a' }] });
    expect(t.items[0]).toMatchObject({ kind: 'tool', images: [{ src: `data:image/png;base64,${PNG}`, alt: 'a' }] });
  });
});
