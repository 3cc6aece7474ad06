import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { fileLockKey } from '../locks/lockManager';
import { countLines, readTextOrNull } from './fileText';
import { displayPath, errnoCode, errorMessage, resolveToolPath } from './paths';
import type { Tool } from './types';

const inputSchema = z.object({
  file_path: z.string().min(1).describe('The absolute path of the file to write (a path relative to the workspace also works)'),
  content: z.string().describe('The full content to write to the file'),
});
export type WriteInput = z.infer<typeof inputSchema>;

const description = `Writes a file to the local filesystem, replacing it if it exists.
- file_path should be an absolute path; relative paths resolve against the workspace root.
- Missing parent directories are created.
- Prefer Edit for changing part of an existing file; use Write for new files or full rewrites.`;

export const writeTool: Tool<WriteInput> = {
  name: 'Write',
  description,
  inputSchema,
  readOnly: false,
  subject(input, ctx) {
    const abs = resolveToolPath(ctx.workspace, input.file_path);
    const before = readTextOrNull(abs);
    const verb = before === null ? 'Create' : 'Overwrite';
    return {
      kind: 'write',
      tool: 'Write',
      paths: [abs],
      summary: `${verb} ${displayPath(ctx.workspace, abs)} (${countLines(input.content)} lines)`,
      diff: { path: abs, before, after: input.content },
    };
  },
  async invoke(input, ctx) {
    const abs = resolveToolPath(ctx.workspace, input.file_path);
    const shown = displayPath(ctx.workspace, abs);
    try {
      return await ctx.locks.runExclusive(
        fileLockKey(abs),
        async () => {
          const stat = await fs.stat(abs).catch(() => undefined);
          if (stat?.isDirectory()) return { content: `${abs} is a directory; give the path of a file.`, isError: true, summary: `Could not write ${shown}` };
          const existed = stat !== undefined;
          await fs.mkdir(path.dirname(abs), { recursive: true });
          await fs.writeFile(abs, input.content, 'utf8');
          const lines = countLines(input.content);
          const verb = existed ? 'Updated' : 'Created';
          return {
            content: `${verb} ${abs} (${lines} lines, ${Buffer.byteLength(input.content, 'utf8')} bytes).`,
            isError: false,
            summary: `${verb === 'Created' ? 'Created' : 'Wrote'} ${shown} (${lines} lines)`,
          };
        },
        { signal: ctx.signal },
      );
    } catch (err) {
      const code = errnoCode(err);
      const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOTDIR' ? 'a parent of this path is a file, not a directory' : errorMessage(err);
      return { content: `Could not write ${abs}: ${why}`, isError: true, summary: `Could not write ${shown}` };
    }
  },
};
