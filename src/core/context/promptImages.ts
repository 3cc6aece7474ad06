import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import type { AttachedImageInfo } from '../../shared/domain/events';
import type { ImageBlock } from '../../shared/domain/messages';
import { CARD_IMAGE_TYPES, type CardImageType } from '../../shared/domain/toolImages';
import { MAX_PROMPT_IMAGE_BYTES, MAX_PROMPT_IMAGES, megabytes as mb } from '../../shared/domain/promptImageLimits';

/**
 * Images the person attaches to a message (`keel run --image FILE`, the composer): PNG, JPEG, GIF
 * or WebP, told apart by their first bytes (not by the file's name), at most MAX_PROMPT_IMAGE_BYTES
 * each (the Messages API's limit) and MAX_PROMPT_IMAGES per message. They go to the model as
 * Anthropic image blocks (OpenAI `image_url` parts) in the user message, and with it into the task's
 * log, so a resumed task still has them. Never throws: what is wrong is said in words.
 */
export { MAX_PROMPT_IMAGE_BYTES, MAX_PROMPT_IMAGES };

export interface PromptImage {
  block: ImageBlock;
  info: AttachedImageInfo;
}

export type PromptImageOutcome = { ok: true; image: PromptImage } | { ok: false; problem: string };

/** The image type its first bytes say, or null when they are not PNG, JPEG, GIF or WebP. */
export function sniffImageType(head: Uint8Array): CardImageType | null {
  const at = (i: number) => head[i] ?? -1;
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => at(i) === x)) return 'image/png';
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** Reads one image file for a prompt. */
export function readPromptImage(path: string): PromptImageOutcome {
  const name = basename(path);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, problem: code === 'ENOENT' ? `the image ${path} does not exist` : `the image ${path} cannot be read (${code ?? (err as Error).message})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, problem: `the image ${path} is not a file` };
    if (st.size > MAX_PROMPT_IMAGE_BYTES) return { ok: false, problem: `the image ${path} is ${mb(st.size)}; an image may be at most ${mb(MAX_PROMPT_IMAGE_BYTES)}` };
    const bytes = Buffer.alloc(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(fd, bytes, read, st.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return imageOf(name, bytes.subarray(0, read), path);
  } catch (err) {
    return { ok: false, problem: `the image ${path} cannot be read (${(err as Error).message})` };
  } finally {
    closeSync(fd);
  }
}

/** An image the composer sent (base64 text, a name): the same checks as a file's. */
export function promptImageFromData(name: string, base64: string): PromptImageOutcome {
  if (base64.length > Math.ceil(MAX_PROMPT_IMAGE_BYTES / 3) * 4 + 4) return { ok: false, problem: `the image ${name} is larger than ${mb(MAX_PROMPT_IMAGE_BYTES)}` };
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) return { ok: false, problem: `the image ${name} is not valid base64 data` };
  return imageOf(name, Buffer.from(base64, 'base64'), name);
}

function imageOf(name: string, bytes: Buffer, shown: string): PromptImageOutcome {
  if (bytes.length === 0) return { ok: false, problem: `the image ${shown} is empty` };
  if (bytes.length > MAX_PROMPT_IMAGE_BYTES) return { ok: false, problem: `the image ${shown} is ${mb(bytes.length)}; an image may be at most ${mb(MAX_PROMPT_IMAGE_BYTES)}` };
  const type = sniffImageType(bytes.subarray(0, 16));
  if (!type || !(CARD_IMAGE_TYPES as readonly string[]).includes(type)) return { ok: false, problem: `${shown} is not a PNG, JPEG, GIF or WebP image` };
  return {
    ok: true,
    image: { block: { type: 'image', source: { type: 'base64', media_type: type, data: bytes.toString('base64') } }, info: { name: name.slice(0, 300), mediaType: type, bytes: bytes.length } },
  };
}

/** Checks a message's images together (their count). */
export function tooManyImages(count: number): string | null {
  return count > MAX_PROMPT_IMAGES ? `${count} images were attached; a message may carry at most ${MAX_PROMPT_IMAGES}` : null;
}
