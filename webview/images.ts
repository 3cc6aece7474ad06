import { MAX_PROMPT_IMAGE_BYTES, MAX_PROMPT_IMAGES, MAX_THUMBNAIL_CHARS, PROMPT_IMAGE_TYPES, megabytes } from '../src/shared/domain/promptImageLimits';

/** An image attached in the composer, ready to send (`data`: base64) and to show (`url`). */
export interface ComposerImage {
  id: number;
  name: string;
  mediaType: string;
  bytes: number;
  data: string;
  /** The image as a `data:` URL (the composer's thumbnail). */
  url: string;
  /** A small preview for the transcript; absent when the page could not make one. */
  thumbnail?: string;
}

/** What an attached file says of itself (a File, or a test's stand-in). */
export interface FileLike {
  name: string;
  type: string;
  size: number;
}

/**
 * Which of `files` may join the `present` images of the message: PNG, JPEG, GIF or WebP, at most
 * MAX_PROMPT_IMAGE_BYTES each, MAX_PROMPT_IMAGES in all. `problems` says, in words, why each
 * other one was left out (the host checks the bytes again). Pure.
 */
export function admitImages<F extends FileLike>(present: number, files: readonly F[]): { admitted: F[]; problems: string[] } {
  const admitted: F[] = [];
  const problems: string[] = [];
  for (const f of files) {
    const name = f.name || 'the pasted image';
    if (!(PROMPT_IMAGE_TYPES as readonly string[]).includes(f.type)) problems.push(`${name} is not a PNG, JPEG, GIF or WebP image`);
    else if (f.size > MAX_PROMPT_IMAGE_BYTES) problems.push(`${name} is ${megabytes(f.size)}; an image may be at most ${megabytes(MAX_PROMPT_IMAGE_BYTES)}`);
    else if (present + admitted.length >= MAX_PROMPT_IMAGES) problems.push(`${name} was not added: a message may carry at most ${MAX_PROMPT_IMAGES} images`);
    else admitted.push(f);
  }
  return { admitted, problems };
}

let nextId = 1;

/** Reads an admitted file into a ComposerImage (its thumbnail comes later: `thumbnailOf`). */
export async function readImage(file: File): Promise<ComposerImage> {
  const url = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
  const data = url.slice(url.indexOf(',') + 1);
  const id = nextId++;
  return { id, name: file.name || `pasted-image-${id}.${file.type.split('/')[1] ?? 'png'}`, mediaType: file.type, bytes: file.size, data, url };
}

/**
 * A JPEG of at most 160 px a side for the transcript, or undefined when it would be too large or
 * cannot be drawn. Never awaited before sending: a message sent first goes without one.
 */
export async function thumbnailOf(url: string): Promise<string | undefined> {
  const img = new Image();
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error('not drawable'));
    img.src = url;
  });
  const scale = Math.min(1, 160 / Math.max(img.naturalWidth, img.naturalHeight, 1));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(img.naturalWidth * scale));
  canvas.height = Math.max(1, Math.round(img.naturalHeight * scale));
  const ctx = canvas.getContext('2d');
  if (!ctx) return undefined;
  // JPEG has no transparency: a white ground rather than black.
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  const out = canvas.toDataURL('image/jpeg', 0.75);
  return out.startsWith('data:image/jpeg;base64,') && out.length <= MAX_THUMBNAIL_CHARS ? out : undefined;
}
