/**
 * What an image attached to a message may be (the composer checks before it sends, the host
 * checks again: src/core/context/promptImages.ts): PNG, JPEG, GIF or WebP, at most
 * MAX_PROMPT_IMAGE_BYTES each (the Messages API's limit), MAX_PROMPT_IMAGES per message.
 */
export const MAX_PROMPT_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_PROMPT_IMAGES = 20;
export const PROMPT_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/** The longest preview `data:` URL a message's image may carry (its thumbnail in the transcript). */
export const MAX_THUMBNAIL_CHARS = 32_000;

/** A size in MB as people read it (one decimal). */
export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
