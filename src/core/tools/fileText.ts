import { readFileSync, promises as fs } from 'node:fs';
import { errnoCode } from './paths';

/**
 * Current text of a file for a permission diff, read synchronously because `subject` is
 * synchronous. `null` when the file does not exist or cannot be read as a file.
 */
export function readTextOrNull(abs: string): string | null {
  try {
    return readFileSync(abs, 'utf8');
  } catch {
    return null;
  }
}

/** Current text of a file, or `null` when it does not exist. Other errors propagate. */
export async function readTextIfExists(abs: string): Promise<string | null> {
  try {
    return await fs.readFile(abs, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
}

/** Number of lines as an editor counts them ("" is 0, "a" and "a\n" are 1). */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}
