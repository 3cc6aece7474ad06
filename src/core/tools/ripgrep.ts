import { promises as fs } from 'node:fs';
import { findOnPath, isExecutableFile } from './executables';
import { runProcess } from './processRunner';
import type { ToolContext, ToolResult } from './types';

/** Per search; ripgrep is fast, so hitting this means the search is far too broad. */
export const RIPGREP_TIMEOUT_MS = 60_000;
/** Raw stdout kept from one ripgrep run, by default, before the rest is ignored. */
const DEFAULT_MAX_STDOUT_CHARS = 8 * 1024 * 1024;

/**
 * Flags every search uses: no configuration file (a `RIPGREP_CONFIG_PATH` the person passed
 * through to Bash must not add `--pre` or change the output format here), hidden files count,
 * `.git` never does, `.gitignore` applies even outside a git repo.
 */
export const RIPGREP_BASE_ARGS: readonly string[] = ['--no-config', '--hidden', '--glob', '!.git', '--no-require-git', '--no-messages', '--color', 'never'];

export type RipgrepResolution = { ok: true; path: string } | { ok: false; result: ToolResult };

/** `ctx.ripgrepPath` if set, else `rg` on PATH. Never throws. */
export function resolveRipgrep(ctx: Pick<ToolContext, 'ripgrepPath'>, searchPath?: string): RipgrepResolution {
  if (ctx.ripgrepPath) {
    if (isExecutableFile(ctx.ripgrepPath)) return { ok: true, path: ctx.ripgrepPath };
    return notFound(`the configured ripgrep binary ${ctx.ripgrepPath} does not exist or is not executable`);
  }
  const found = findOnPath('rg', searchPath);
  if (found) return { ok: true, path: found };
  return notFound('it is not on PATH');
}

function notFound(why: string): RipgrepResolution {
  return {
    ok: false,
    result: {
      content:
        `ripgrep (rg) was not found (${why}); install it (apt-get install ripgrep, brew install ripgrep, or see ` +
        'https://github.com/BurntSushi/ripgrep) and try again. Until then use Bash with grep or find.',
      isError: true,
      summary: 'ripgrep not found',
    },
  };
}

export interface RipgrepRun {
  /** 0: matches, 1: none, 2: error (possibly with partial results). */
  code: number | null;
  /** Complete output lines. */
  lines: string[];
  stderr: string;
  /** Stdout went past the internal cap; `lines` holds the first part. */
  stdoutCapped: boolean;
}

/** Runs ripgrep; a failure to run (cancel, timeout, spawn) comes back as an error `ToolResult`. */
export async function runRipgrep(
  rgPath: string,
  args: readonly string[],
  ctx: Pick<ToolContext, 'workspace' | 'signal' | 'env'>,
  maxStdoutChars = DEFAULT_MAX_STDOUT_CHARS,
  cwd: string = ctx.workspace,
): Promise<RipgrepRun | ToolResult> {
  let stdout = '';
  let stdoutCapped = false;
  let stderr = '';
  const outcome = await runProcess(rgPath, args, {
    cwd,
    signal: ctx.signal,
    ...(ctx.env ? { env: ctx.env } : {}),
    timeoutMs: RIPGREP_TIMEOUT_MS,
    onStdout: (chunk) => {
      if (stdoutCapped) return;
      if (stdout.length + chunk.length > maxStdoutChars) {
        stdout += chunk.slice(0, maxStdoutChars - stdout.length);
        stdoutCapped = true;
        const lastNl = stdout.lastIndexOf('\n');
        stdout = lastNl === -1 ? '' : stdout.slice(0, lastNl + 1);
      } else stdout += chunk;
    },
    onStderr: (chunk) => {
      if (stderr.length < 4000) stderr += chunk;
    },
  });
  switch (outcome.kind) {
    case 'spawnFailed':
      return { content: `Could not run ripgrep: ${outcome.message}`, isError: true, summary: 'ripgrep failed to start' };
    case 'cancelled':
      return { content: 'The search was cancelled.', isError: true, summary: 'cancelled' };
    case 'timedOut':
      return { content: `The search timed out after ${outcome.timeoutMs} ms; narrow the path or pattern.`, isError: true, summary: 'search timed out' };
    case 'exited': {
      const lines = stdout.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      return { code: outcome.code, lines, stderr: stderr.trim(), stdoutCapped };
    }
  }
}

export function isToolResult(x: RipgrepRun | ToolResult): x is ToolResult {
  return 'isError' in x;
}

/**
 * What a search below `root` must skip (the permission engine's Read rules, `ToolContext
 * .searchExclusions`): the `--glob !GLOB` arguments, the folder ripgrep must run from and search
 * for them to be anchored there, and a note for the model naming the rules. For a single file
 * (nothing below it) or nothing to skip: no arguments, and `root` as given.
 */
export async function searchScope(root: string, ctx: Pick<ToolContext, 'searchExclusions' | 'workspace'>): Promise<{ args: string[]; cwd: string; root: string; note: string }> {
  let isDir = false;
  try {
    isDir = (await fs.stat(root)).isDirectory();
  } catch {
    // checkSearchRoot reports a missing root.
  }
  const ex = isDir ? await ctx.searchExclusions(root) : null;
  if (!ex || ex.globs.length === 0) return { args: [], cwd: ctx.workspace, root, note: '' };
  // The globs are anchored at the physical folder: ripgrep runs from it and walks it (a path
  // through a symlink would not carry that prefix, and nothing would be skipped).
  return {
    args: ex.globs.flatMap((g) => ['--glob', `!${g}`]),
    cwd: ex.root,
    root: ex.root,
    note: `\n\n[Not searched: files that ${ex.rules.join(', ')} keep${ex.rules.length === 1 ? 's' : ''} out of reach.]`,
  };
}

/** Checks that a search root exists; returns an error result when it does not. */
export async function checkSearchRoot(abs: string): Promise<ToolResult | undefined> {
  try {
    await fs.stat(abs);
    return undefined;
  } catch {
    return { content: `Path does not exist: ${abs}`, isError: true, summary: 'path not found' };
  }
}

/** Sorts absolute paths by modification time, newest first (ties and unreadable files by name). */
export async function sortByMtimeDesc(paths: readonly string[]): Promise<string[]> {
  const withTimes = await Promise.all(
    paths.map(async (p) => {
      try {
        return { p, t: (await fs.stat(p)).mtimeMs };
      } catch {
        return { p, t: 0 };
      }
    }),
  );
  withTimes.sort((a, b) => b.t - a.t || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
  return withTimes.map((x) => x.p);
}
