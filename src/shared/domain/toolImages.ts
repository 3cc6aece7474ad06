/**
 * Images a tool returned (an MCP server's `image` content), as the chat's tool card may show
 * them. A server is untrusted: the host turns an image into a `data:` URL only after checking it
 * here — an allowed raster type (PNG, JPEG, GIF, WebP: no SVG, which can carry script), strict
 * base64, a decoded size under the cap, and leading bytes that really are that type — and the
 * webview shows only a URL that passes `isCardImageSrc` again. Never an `http(s)` URL a server
 * names: the webview fetches nothing a server chose. Pure (no Node API: the webview uses it too).
 */

export const CARD_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type CardImageType = (typeof CARD_IMAGE_TYPES)[number];

/** At most this many decoded bytes per image shown in a card (the model still gets larger ones). */
export const MAX_CARD_IMAGE_BYTES = 1024 * 1024;
/** At most this many images shown in one card; the others stay named. */
export const MAX_CARD_IMAGES = 8;

/** One image a tool card shows: `src` is a checked `data:` URL; `alt` names it for people. */
export interface CardImage {
  src: string;
  alt: string;
}

export type CardImageCheck = { ok: true; image: CardImage } | { ok: false; reason: string };

// With a length that is a multiple of 4, this is strict base64 (padding only at the end); a
// regular expression that counts groups of four takes most of a second on a 1 MB image.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_BASE64_CHARS = Math.ceil(MAX_CARD_IMAGE_BYTES / 3) * 4;
const SRC = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/]*={0,2})$/;

/** The first bytes every file of each type starts with (WebP: RIFF, then WEBP at offset 8). */
const MAGIC: Record<CardImageType, (b: number[]) => boolean> = {
  'image/png': (b) => [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => b[i] === x),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/gif': (b) => String.fromCharCode(...b.slice(0, 6)) === 'GIF87a' || String.fromCharCode(...b.slice(0, 6)) === 'GIF89a',
  'image/webp': (b) => String.fromCharCode(...b.slice(0, 4)) === 'RIFF' && String.fromCharCode(...b.slice(8, 12)) === 'WEBP',
};

function isCardImageType(t: string): t is CardImageType {
  return (CARD_IMAGE_TYPES as readonly string[]).includes(t);
}

/** Decoded size of strict base64 text. */
function decodedBytes(base64: string): number {
  const pad = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - pad;
}

/** The first 12 decoded bytes (base64 of 16 characters), without any Node or DOM API. */
function leadingBytes(base64: string): number[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const out: number[] = [];
  const head = base64.slice(0, 16);
  for (let i = 0; i + 4 <= head.length; i += 4) {
    const [a, b, c, d] = [...head.slice(i, i + 4)].map((ch) => alphabet.indexOf(ch));
    const n = ((a! & 63) << 18) | ((b! & 63) << 12) | (((c ?? 0) & 63) << 6) | ((d ?? 0) & 63);
    out.push((n >> 16) & 255);
    if (head[i + 2] !== '=') out.push((n >> 8) & 255);
    if (head[i + 3] !== '=') out.push(n & 255);
  }
  return out;
}

/**
 * Checks one image a tool returned and builds its `data:` URL, or says why it is not shown
 * (the card then names it). `label` is the card's words for it (bounded here).
 */
export function checkCardImage(mediaType: string, base64: string, label: string): CardImageCheck {
  if (!isCardImageType(mediaType)) return { ok: false, reason: `type ${JSON.stringify(mediaType.slice(0, 60))} is not PNG, JPEG, GIF or WebP` };
  if (base64.length > MAX_BASE64_CHARS) return { ok: false, reason: `larger than ${Math.round(MAX_CARD_IMAGE_BYTES / 1024)} KB` };
  if (base64.length === 0 || base64.length % 4 !== 0 || !BASE64.test(base64)) return { ok: false, reason: 'its data is not valid base64' };
  const bytes = decodedBytes(base64);
  if (bytes > MAX_CARD_IMAGE_BYTES) return { ok: false, reason: `larger than ${Math.round(MAX_CARD_IMAGE_BYTES / 1024)} KB` };
  if (!MAGIC[mediaType](leadingBytes(base64))) return { ok: false, reason: `its data is not a ${mediaType.slice(6).toUpperCase()} image` };
  return { ok: true, image: { src: `data:${mediaType};base64,${base64}`, alt: label.slice(0, 200) } };
}

/** True for a `data:` URL `checkCardImage` could have built (the webview's own check before an <img>). */
export function isCardImageSrc(src: string): boolean {
  if (src.length > MAX_BASE64_CHARS + 40) return false;
  const m = SRC.exec(src);
  if (!m) return false;
  const [, type, data] = m;
  return checkCardImage(type!, data!, '').ok;
}
