import * as path from 'node:path';
import * as z from 'zod/mini';
import { described } from './described';
import { createGlobMatcher } from './globMatch';
import { displayPath, resolveToolPath } from './paths';
import { checkSearchRoot, isToolResult, resolveRipgrep, RIPGREP_BASE_ARGS, runRipgrep, searchScope, sortByMtimeDesc } from './ripgrep';
import type { Tool } from './types';

export const GLOB_MAX_RESULTS = 100;
/** Characters of file listing read from ripgrep (about 300k paths). */
const GLOB_MAX_LISTING_CHARS = 32 * 1024 * 1024;

const inputSchema = z.object({
  pattern: described(z.string().check(z.minLength(1)), 'The glob pattern to match files against, e.g. "**/*.ts" or "src/**/*.{js,jsx}"'),
  path: described(z.optional(z.string()), 'The directory to search in (default: the workspace root)'),
});
export type GlobInput = z.infer<typeof inputSchema>;

const description = `Fast file pattern matching over the files ripgrep lists.
- Supports glob patterns like "**/*.js", "src/**/*.ts" or "*.{ts,tsx}"; a pattern without "/" matches file names at any depth.
- Respects .gitignore (ignored files are not listed; use Bash ls for them); never lists .git.
- Returns absolute paths sorted by modification time, newest first, at most ${GLOB_MAX_RESULTS}.`;

export const globTool: Tool<GlobInput> = {
  name: 'Glob',
  description,
  inputSchema,
  readOnly: true,
  subject(input, ctx) {
    const root = resolveToolPath(ctx.workspace, input.path ?? '.');
    return { kind: 'read', tool: 'Glob', paths: [root], summary: `Find files matching ${input.pattern} in ${displayPath(ctx.workspace, root)}` };
  },
  async invoke(input, ctx) {
    const rg = resolveRipgrep(ctx);
    if (!rg.ok) return rg.result;
    const root = resolveToolPath(ctx.workspace, input.path ?? '.');
    const missing = await checkSearchRoot(root);
    if (missing) return missing;
    // rg's own --glob is an override that beats .gitignore (`**/*` would walk node_modules), so
    // list the files rg does not ignore and match the pattern here.
    // Files the Read rules keep out are not listed (the permission decision relied on it).
    const scope = await searchScope(root, ctx);
    const run = await runRipgrep(rg.path, ['--files', ...RIPGREP_BASE_ARGS, ...scope.args, '--', scope.root], ctx, GLOB_MAX_LISTING_CHARS, scope.cwd);
    if (isToolResult(run)) return run;
    if (run.code === 2 && run.lines.length === 0) {
      return { content: `Glob failed: ${run.stderr || 'ripgrep reported an error'}`, isError: true, summary: 'glob failed' };
    }
    const matches = createGlobMatcher(input.pattern);
    const matched = run.lines.filter((abs) => matches(path.relative(scope.root, abs)));
    if (matched.length === 0) return { content: `No files found${scope.note}`, isError: false, summary: 'No files found' };
    const sorted = await sortByMtimeDesc(matched);
    const shown = sorted.slice(0, GLOB_MAX_RESULTS);
    let content = shown.join('\n');
    if (sorted.length > GLOB_MAX_RESULTS) {
      content += `\n\n[Showing the ${GLOB_MAX_RESULTS} most recently modified of ${sorted.length} files. Use a more specific pattern or path to narrow the results.]`;
    }
    if (run.stdoutCapped) content += '\n\n[The file listing under this path was too large and was cut, so some matches may be missing. Give a narrower path.]';
    content += scope.note;
    return { content, isError: false, summary: `Found ${sorted.length}${run.stdoutCapped ? '+' : ''} file${sorted.length === 1 ? '' : 's'}` };
  },
};
