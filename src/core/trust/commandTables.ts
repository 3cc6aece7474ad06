import type { Word } from './commandWords';

/**
 * The tables commandFiles.ts reads a command line with: which words are shell keywords or
 * builtins that run nothing, which programs are shells, runtimes and wrappers, and which of their
 * options take code, a file or another argument; and how to step over a wrapper's options. Data
 * and pure functions only.
 */
export const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib', '/etc/', '/opt/', '/nix/', '/snap/', '/proc/', '/dev/', '/sys/'];
export const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!', '{', '}', 'time', 'coproc']);
export const NOT_COMMANDS = new Set(['for', 'case', 'esac', 'select', 'function', 'in', ';;']);
export const NO_EXEC = new Set(['[[', ']]', '[', 'test', 'true', 'false', ':', 'echo', 'printf', 'exit', 'return', 'cd', 'export', 'read', 'set', 'shift', 'local', 'declare', 'unset']);
export const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh']);
export const JS_RUNTIMES = new Set(['node', 'nodejs', 'tsx', 'ts-node', 'deno', 'bun']);
export const CODE_OPTIONS: Record<string, Set<string>> = {
  js: new Set(['-e', '--eval', '-p', '--print']),
  python: new Set(['-c']),
  perl: new Set(['-e', '-E']),
  ruby: new Set(['-e']),
  php: new Set(['-r']),
};
export const FILE_OPTIONS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '--env-file', '--env-file-if-exists']);
export const ARG_OPTIONS = new Set(['--input-type', '--stack-size', '-W', '-X', '-I', '-M', '--conditions', '-C', '--title', '--cwd']);

/** The words after a wrapper's own options (`timeout DURATION CMD`: the duration too). */
export function skipWrapperOptions(prog: string, args: Word[]): Word[] {
  const withArg: Record<string, Set<string>> = {
    nice: new Set(['-n', '--adjustment']),
    timeout: new Set(['-s', '--signal', '-k', '--kill-after']),
    sudo: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U']),
    stdbuf: new Set(['-i', '-o', '-e']),
  };
  let rest = skipOptions(args, withArg[prog] ?? new Set());
  // timeout DURATION CMD
  if (prog === 'timeout' && rest.length > 0) rest = rest.slice(1);
  return rest;
}

/** The words after the leading options (and the arguments of `withArg` options). */
export function skipOptions(args: Word[], withArg: Set<string>): Word[] {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (!a.literal || !a.text.startsWith('-') || a.text === '-') break;
    if (a.text === '--') {
      i++;
      break;
    }
    i += withArg.has(a.text) ? 2 : 1;
  }
  return args.slice(i);
}

export function optionValue(args: Word[], names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.literal) continue;
    for (const n of names) {
      if (a.text === n) return args[i + 1]?.literal ? args[i + 1]!.text : undefined;
      if (n.startsWith('--') && a.text.startsWith(`${n}=`)) return a.text.slice(n.length + 1);
    }
  }
  return undefined;
}

