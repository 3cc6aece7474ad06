import * as z from 'zod/mini';
import { described } from './described';
import { truncateText } from './cappedText';
import { displayPath, resolveToolPath } from './paths';
import { checkSearchRoot, isToolResult, resolveRipgrep, RIPGREP_BASE_ARGS, runRipgrep, searchScope, sortByMtimeDesc } from './ripgrep';
import type { Tool } from './types';

export const GREP_MAX_OUTPUT_CHARS = 30_000;
const MAX_COLUMNS = 500;

const inputSchema = z.object({
  pattern: described(z.string().check(z.minLength(1)), 'The regular expression to search for (ripgrep / Rust regex syntax)'),
  path: described(z.optional(z.string()), 'File or directory to search in (default: the workspace root)'),
  glob: described(z.optional(z.string()), 'Glob to filter files, e.g. "*.js" or "*.{ts,tsx}"'),
  type: described(z.optional(z.string()), 'File type to search (rg --type), e.g. "js", "py", "rust"'),
  output_mode: described(
    z.optional(z.enum(['content', 'files_with_matches', 'count'])),
    '"content" shows matching lines, "files_with_matches" shows file paths (default), "count" shows match counts per file',
  ),
  '-i': described(z.optional(z.boolean()), 'Case insensitive search'),
  '-n': described(z.optional(z.boolean()), 'Show line numbers (content mode only; default true)'),
  '-A': described(z.optional(z.number().check(z.int(), z.gte(0))), 'Lines to show after each match (content mode only)'),
  '-B': described(z.optional(z.number().check(z.int(), z.gte(0))), 'Lines to show before each match (content mode only)'),
  '-C': described(z.optional(z.number().check(z.int(), z.gte(0))), 'Lines to show before and after each match (content mode only)'),
  multiline: described(z.optional(z.boolean()), 'Let patterns span lines; "." also matches newlines (default false)'),
  head_limit: described(z.optional(z.number().check(z.int(), z.gte(1))), 'Only return the first N lines / files / counts'),
});
export type GrepInput = z.infer<typeof inputSchema>;

const description = `A powerful search tool built on ripgrep.
- Full regex syntax ("log.*Error", "function\\s+\\w+"); literal braces need escaping ("interface\\{\\}").
- Filter files with glob ("*.ts") or type ("py").
- output_mode: "files_with_matches" (default, paths newest first), "content" (matching lines with -n, -A, -B, -C), "count".
- Respects .gitignore; never searches .git. Use head_limit to cap results.
- Always use Grep for searching; do not run grep or rg through Bash.`;

export const grepTool: Tool<GrepInput> = {
  name: 'Grep',
  description,
  inputSchema,
  readOnly: true,
  subject(input, ctx) {
    const root = resolveToolPath(ctx.workspace, input.path ?? '.');
    return { kind: 'read', tool: 'Grep', paths: [root], summary: `Search for /${input.pattern}/ in ${displayPath(ctx.workspace, root)}` };
  },
  async invoke(input, ctx) {
    const rg = resolveRipgrep(ctx);
    if (!rg.ok) return rg.result;
    const root = resolveToolPath(ctx.workspace, input.path ?? '.');
    const missing = await checkSearchRoot(root);
    if (missing) return missing;
    const mode = input.output_mode ?? 'files_with_matches';
    // Files the Read rules keep out are never read (the permission decision relied on it).
    const scope = await searchScope(root, ctx);
    const run = await runRipgrep(rg.path, buildArgs(input, mode, scope.root, scope.args), ctx, undefined, scope.cwd);
    if (isToolResult(run)) return run;
    if (run.code === 2 && run.lines.length === 0) {
      return { content: `Grep failed: ${run.stderr || 'ripgrep reported an error'}`, isError: true, summary: 'grep failed' };
    }
    if (run.lines.length === 0) {
      const none = mode === 'files_with_matches' ? 'No files found' : 'No matches found';
      return { content: none + scope.note, isError: false, summary: none };
    }
    const limited = (items: string[]): { items: string[]; note: string } => {
      if (input.head_limit === undefined || items.length <= input.head_limit) return { items, note: '' };
      return { items: items.slice(0, input.head_limit), note: `\n\n[Showing the first ${input.head_limit} of ${items.length}${run.stdoutCapped ? '+' : ''} results (head_limit).]` };
    };
    const hint = 'use head_limit, a narrower path or glob, or output_mode "files_with_matches"';

    if (mode === 'files_with_matches') {
      const { items, note } = limited(await sortByMtimeDesc(run.lines));
      const n = run.lines.length;
      const text = truncateText(`Found ${n} file${n === 1 ? '' : 's'}\n${items.join('\n')}`, GREP_MAX_OUTPUT_CHARS, hint);
      return { content: text + note + scope.note, isError: false, summary: `Found ${n} file${n === 1 ? '' : 's'}` };
    }
    if (mode === 'count') {
      const total = run.lines.reduce((sum, line) => sum + (Number(line.slice(line.lastIndexOf(':') + 1)) || 0), 0);
      const { items, note } = limited(run.lines);
      const files = run.lines.length;
      const summary = `Found ${total} match${total === 1 ? '' : 'es'} in ${files} file${files === 1 ? '' : 's'}`;
      return { content: truncateText(`${items.join('\n')}\n\n${summary}`, GREP_MAX_OUTPUT_CHARS, hint) + note + scope.note, isError: false, summary };
    }
    const { items, note } = limited(run.lines);
    const text = truncateText(items.join('\n'), GREP_MAX_OUTPUT_CHARS, hint);
    const matchLines = run.lines.filter((l) => l !== '--').length;
    return { content: text + note + scope.note, isError: false, summary: `Found ${matchLines} line${matchLines === 1 ? '' : 's'}` };
  },
};

function buildArgs(input: GrepInput, mode: 'content' | 'files_with_matches' | 'count', root: string, exclusions: readonly string[]): string[] {
  const args: string[] = ['--with-filename'];
  if (mode === 'files_with_matches') args.push('--files-with-matches');
  else if (mode === 'count') args.push('--count');
  else {
    args.push('--no-heading', '--max-columns', String(MAX_COLUMNS), '--max-columns-preview');
    if (input['-n'] ?? true) args.push('--line-number');
    if (input['-C'] !== undefined) args.push('--context', String(input['-C']));
    if (input['-A'] !== undefined) args.push('--after-context', String(input['-A']));
    if (input['-B'] !== undefined) args.push('--before-context', String(input['-B']));
  }
  if (input['-i']) args.push('--ignore-case');
  if (input.multiline) args.push('--multiline', '--multiline-dotall');
  if (input.type) args.push('--type', input.type);
  // A later glob wins, so the user's glob goes before the base '!.git'.
  if (input.glob) args.push('--glob', input.glob);
  // Exclusions last: a later glob wins over the person's own.
  args.push(...RIPGREP_BASE_ARGS, ...exclusions, '--regexp', input.pattern, '--', root);
  return args;
}
