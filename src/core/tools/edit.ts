import { errorMessage } from '../../shared/domain/errors';
import { promises as fs } from 'node:fs';
import * as z from 'zod/mini';
import { described } from './described';
import { fileLockKey } from '../locks/lockManager';
import { applyEdit, snippetAround, type EditOutcome } from './editText';
import { readTextIfExists, readTextOrNull } from './fileText';
import { displayPath, errnoCode, resolveToolPath } from './paths';
import type { PermissionSubject, Tool, ToolResult } from './types';
import { approvedWriteTarget, resolveWriteTarget, throughLink, writeNoFollow } from './writeTarget';

const inputSchema = z.object({
  file_path: described(z.string().check(z.minLength(1)), 'The absolute path of the file to modify (a path relative to the workspace also works)'),
  old_string: described(z.string(), 'The exact text to replace, including whitespace and indentation'),
  new_string: described(z.string(), 'The text to replace it with (must differ from old_string)'),
  replace_all: described(z.optional(z.boolean()), 'Replace every occurrence of old_string (default false)'),
});
export type EditInput = z.infer<typeof inputSchema>;

const description = `Performs an exact string replacement in a file.
- old_string must match the file's text exactly, including whitespace and indentation.
- The edit fails if old_string is not found, or if it occurs more than once: then give more surrounding context to make it unique, or set replace_all to change every occurrence.
- An empty old_string creates a new file (or fills an empty one) with new_string.
- Read the file first so old_string is copied from its current content.`;

export const editTool: Tool<EditInput> = {
  name: 'Edit',
  description,
  inputSchema,
  readOnly: false,
  subject(input, ctx) {
    const abs = resolveToolPath(ctx.workspace, input.file_path);
    const shown = displayPath(ctx.workspace, abs);
    const before = readTextOrNull(abs);
    const target = resolveWriteTarget(abs);
    const link = throughLink(ctx.workspace, abs);
    const base: PermissionSubject = { kind: 'write', tool: 'Edit', paths: [abs], ...(target.ok ? { targets: [target.path] } : {}), summary: `Edit ${shown}${link}` };
    const planned = plan(before, input, abs);
    if (!planned.ok) return { ...base, summary: `Edit ${shown}${link} (will fail: ${planned.reason})` };
    return { ...base, summary: `${before === null ? 'Create' : 'Edit'} ${shown}${link}`, diff: { path: abs, before, after: planned.after } };
  },
  async invoke(input, ctx) {
    const abs = resolveToolPath(ctx.workspace, input.file_path);
    const shown = displayPath(ctx.workspace, abs);
    const fail = (content: string): ToolResult => ({ content, isError: true, summary: `Edit of ${shown} failed` });
    try {
      return await ctx.locks.runExclusive(
        fileLockKey(abs),
        async (): Promise<ToolResult> => {
          const target = approvedWriteTarget(abs, ctx.approved);
          if (!target.ok) return fail(target.message);
          const stat = await fs.stat(target.path).catch(() => undefined);
          if (stat?.isDirectory()) return fail(`${abs} is a directory; give the path of a file.`);
          const before = await readTextIfExists(target.path);
          if (before === null && input.old_string !== '') return fail(`File does not exist: ${abs}. To create a file, use Write (or Edit with an empty old_string).`);
          const planned = plan(before, input, abs);
          if (!planned.ok) return fail(planned.message);
          await writeNoFollow(target.path, planned.after);
          if (before === null) return { content: `Created ${abs}.`, isError: false, summary: `Created ${shown}` };
          const n = planned.replacements;
          const snippet = n === 1 ? `\nThe edited region now reads:\n${snippetAround(planned.after, planned.firstIndex, planned.newLength)}` : '';
          return { content: `Edited ${abs}: ${n} replacement${n === 1 ? '' : 's'}.${snippet}`, isError: false, summary: `Edited ${shown} (${n} replacement${n === 1 ? '' : 's'})` };
        },
        { signal: ctx.signal },
      );
    } catch (err) {
      const code = errnoCode(err);
      const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ELOOP' ? 'a symlink appeared at this path while writing; nothing was written' : errorMessage(err);
      return fail(`Could not edit ${abs}: ${why}`);
    }
  },
};

type Planned = { ok: true; after: string; replacements: number; firstIndex: number; newLength: number } | { ok: false; reason: string; message: string };

/** What the edit would do to `before` (null: the file does not exist). */
function plan(before: string | null, input: EditInput, abs: string): Planned {
  if (input.old_string === input.new_string) {
    return { ok: false, reason: 'no change', message: 'old_string and new_string are identical; there is nothing to change.' };
  }
  if (input.old_string === '') {
    if (before === null || before === '') return { ok: true, after: input.new_string, replacements: 1, firstIndex: 0, newLength: input.new_string.length };
    return { ok: false, reason: 'empty old_string', message: 'old_string is empty but the file already has content. Give the exact text to replace, or use Write to replace the whole file.' };
  }
  if (before === null) return { ok: false, reason: 'file does not exist', message: 'File does not exist.' };
  const r: EditOutcome = applyEdit(before, input.old_string, input.new_string, input.replace_all ?? false);
  if (r.ok) return r;
  switch (r.reason) {
    case 'notFound':
      return { ok: false, reason: 'old_string not found', message: `old_string was not found in ${abs}. Read the file again and copy the exact text, including whitespace and indentation.` };
    case 'ambiguous':
      return {
        ok: false,
        reason: `${r.matches} matches`,
        message:
          `Found ${r.matches} matches of old_string in ${abs}, but replace_all is false. Add more surrounding context to old_string ` +
          'so it matches exactly once, or set replace_all to true to replace every occurrence.',
      };
    default:
      return { ok: false, reason: 'no change', message: 'old_string and new_string are identical; there is nothing to change.' };
  }
}
