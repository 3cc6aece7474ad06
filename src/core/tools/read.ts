import { errorMessage } from '../../shared/domain/errors';
import { createReadStream, promises as fs } from 'node:fs';
import * as z from 'zod/mini';
import { described } from './described';
import { displayPath, errnoCode, resolveToolPath } from './paths';
import type { Tool, ToolResult } from './types';

export const READ_DEFAULT_LIMIT = 2000;
export const READ_MAX_LINE_CHARS = 2000;
/** Most characters of numbered output one Read returns. */
export const READ_MAX_OUTPUT_CHARS = 256 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;

const inputSchema = z.object({
  file_path: described(z.string().check(z.minLength(1)), 'The absolute path of the file to read (a path relative to the workspace also works)'),
  offset: described(z.optional(z.number().check(z.int(), z.gte(0))), 'The line number to start reading from (1-based; 0 is read as 1). Only give it for files too large to read at once'),
  limit: described(z.optional(z.number().check(z.int(), z.gte(1))), `The number of lines to read (default ${READ_DEFAULT_LIMIT})`),
});
export type ReadInput = z.infer<typeof inputSchema>;

const description = `Reads a file from the local filesystem.
- file_path should be an absolute path; relative paths resolve against the workspace root.
- Reads up to ${READ_DEFAULT_LIMIT} lines from the start by default; use offset and limit for long files.
- Lines longer than ${READ_MAX_LINE_CHARS} characters are truncated; output stops after ${READ_MAX_OUTPUT_CHARS / 1024} KB.
- Output is in cat -n format: the line number, a tab, then the line.
- Binary files and directories cannot be read (use Glob or Bash ls for directories).`;

export const readTool: Tool<ReadInput> = {
  name: 'Read',
  description,
  inputSchema,
  readOnly: true,
  subject(input, ctx) {
    const abs = resolveToolPath(ctx.workspace, input.file_path);
    return { kind: 'read', tool: 'Read', paths: [abs], summary: `Read ${displayPath(ctx.workspace, abs)}` };
  },
  async invoke(input, ctx) {
    const abs = resolveToolPath(ctx.workspace, input.file_path);
    const shown = displayPath(ctx.workspace, abs);
    const fail = (content: string): ToolResult => ({ content, isError: true, summary: `Could not read ${shown}` });
    try {
      const stat = await fs.stat(abs);
      if (stat.isDirectory()) return fail(`${abs} is a directory, not a file. Use Glob (or Bash ls) to list its contents.`);
      if (!stat.isFile()) return fail(`${abs} is not a regular file.`);
      if (await looksBinary(abs)) return fail(`Cannot read ${abs}: binary file (it contains NUL bytes). Read only works on text files.`);
      if (stat.size === 0) return { content: `(${abs} exists but is empty)`, isError: false, summary: `Read ${shown} (empty)` };

      const offset = Math.max(1, input.offset ?? 1);
      const limit = input.limit ?? READ_DEFAULT_LIMIT;
      const r = await readNumberedLines(abs, offset, limit, ctx.signal);
      if (r.cancelled) return fail('Read was cancelled.');
      if (r.shown === 0) {
        return { content: `${abs} has only ${r.linesSeen} lines; offset ${offset} is past the end of the file.`, isError: false, summary: `Read 0 lines of ${shown}` };
      }
      const last = offset + r.shown - 1;
      const notes: string[] = [];
      if (r.longLines > 0) notes.push(`${r.longLines} line(s) longer than ${READ_MAX_LINE_CHARS} characters were truncated.`);
      if (r.capped) notes.push(`Output stopped at ${READ_MAX_OUTPUT_CHARS / 1024} KB after line ${last}; call Read with offset=${last + 1} to continue.`);
      else if (r.moreAfter) notes.push(`Showing lines ${offset}-${last}; the file continues. Call Read with offset=${last + 1} to read more.`);
      const content = notes.length ? `${r.text}\n\n[${notes.join(' ')}]` : r.text;
      return { content, isError: false, summary: `Read ${r.shown} lines of ${shown}` };
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT') return fail(`File does not exist: ${abs}`);
      if (code === 'EACCES' || code === 'EPERM') return fail(`Permission denied reading ${abs}.`);
      return fail(`Could not read ${abs}: ${errorMessage(err)}`);
    }
  },
};

/** True when the first 8 KB of the file contain a NUL byte. */
export async function looksBinary(abs: string): Promise<boolean> {
  const handle = await fs.open(abs, 'r');
  try {
    const buf = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buf, 0, BINARY_SNIFF_BYTES, 0);
    return buf.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}

interface NumberedLines {
  text: string;
  shown: number;
  /** Lines counted before stopping (the whole file when it ended early). */
  linesSeen: number;
  moreAfter: boolean;
  capped: boolean;
  longLines: number;
  cancelled: boolean;
}

/**
 * Streams the file and formats lines [offset, offset+limit) as `cat -n`, stopping as soon as it
 * has enough. A very long line is never held whole: only its first READ_MAX_LINE_CHARS are kept.
 */
async function readNumberedLines(abs: string, offset: number, limit: number, signal: AbortSignal): Promise<NumberedLines> {
  const out: string[] = [];
  let outChars = 0;
  let lineNo = 0;
  let current = '';
  let currentLong = false;
  let moreAfter = false;
  let capped = false;
  let longLines = 0;
  let done = false;

  const takeLine = (): void => {
    lineNo++;
    const raw = current.endsWith('\r') ? current.slice(0, -1) : current;
    const long = currentLong || raw.length > READ_MAX_LINE_CHARS;
    current = '';
    currentLong = false;
    if (lineNo < offset) return;
    if (out.length >= limit) {
      moreAfter = true;
      done = true;
      return;
    }
    if (long) longLines++;
    const text = long ? `${raw.slice(0, READ_MAX_LINE_CHARS)}… [line truncated]` : raw;
    const formatted = `${String(lineNo).padStart(6)}\t${text}`;
    if (outChars + formatted.length + 1 > READ_MAX_OUTPUT_CHARS && out.length > 0) {
      capped = true;
      done = true;
      return;
    }
    out.push(formatted);
    outChars += formatted.length + 1;
  };

  const stream = createReadStream(abs, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      if (signal.aborted) return { text: '', shown: 0, linesSeen: lineNo, moreAfter, capped, longLines, cancelled: true };
      let start = 0;
      while (!done) {
        const nl = chunk.indexOf('\n', start);
        const piece = nl === -1 ? chunk.slice(start) : chunk.slice(start, nl);
        if (!currentLong) {
          current += piece;
          // Keep one spare char so a trailing '\r' can still be stripped.
          if (current.length > READ_MAX_LINE_CHARS + 1) {
            current = current.slice(0, READ_MAX_LINE_CHARS + 1);
            currentLong = true;
          }
        }
        if (nl === -1) break;
        takeLine();
        start = nl + 1;
      }
      if (done) break;
    }
    // A last line without a trailing newline still counts.
    if (!done && current.length > 0) takeLine();
  } finally {
    stream.destroy();
  }
  return { text: out.join('\n'), shown: out.length, linesSeen: lineNo, moreAfter, capped, longLines, cancelled: false };
}
