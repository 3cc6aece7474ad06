import { errorMessage } from '../../shared/domain/errors';
import { promises as fs } from 'node:fs';
import * as z from 'zod/mini';
import { described } from './described';
import { fileLockKey } from '../locks/lockManager';
import { countLines, readTextOrNull } from './fileText';
import { displayPath, errnoCode, resolveToolPath } from './paths';
import type { Tool } from './types';
import { approvedWriteTarget, resolveWriteTarget, throughLink, writeNoFollow } from './writeTarget';

const inputSchema = z.object({
  file_path: described(z.string().check(z.minLength(1)), 'The absolute path of the file to write (a path relative to the workspace also works)'),
  content: described(z.string(), 'The full content to write to the file'),
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
    const target = resolveWriteTarget(abs);
    return {
      kind: 'write',
      tool: 'Write',
      paths: [abs],
      ...(target.ok ? { targets: [target.path] } : {}),
      summary: `${verb} ${displayPath(ctx.workspace, abs)} (${countLines(input.content)} lines)${throughLink(ctx.workspace, abs)}`,
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
          const target = approvedWriteTarget(abs, ctx.approved);
          if (!target.ok) return { content: target.message, isError: true, summary: `Did not write ${shown}` };
          const stat = await fs.stat(target.path).catch(() => undefined);
          if (stat?.isDirectory()) return { content: `${abs} is a directory; give the path of a file.`, isError: true, summary: `Could not write ${shown}` };
          const existed = stat !== undefined;
          await writeNoFollow(target.path, input.content);
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
      const why =
        code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'ENOTDIR'
            ? 'a parent of this path is a file, not a directory'
            : code === 'ELOOP'
              ? 'a symlink appeared at this path while writing; nothing was written'
              : errorMessage(err);
      return { content: `Could not write ${abs}: ${why}`, isError: true, summary: `Could not write ${shown}` };
    }
  },
};
