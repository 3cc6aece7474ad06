import { isAbsolute } from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { ShellWord } from './words';

/** Redirections and tree shapes, as the walker (analyze.ts) needs them. Pure. */

/**
 * A file a redirection opens. `path` is absolute but not normalised (`/ws/src/link/../x`): the
 * kernel resolves symlinks before `..`, so callers resolve it physically. Null when computed at
 * run time or otherwise unknowable. `network`: `/dev/tcp/…` or `/dev/udp/…`, which bash turns
 * into a network connection, not a file.
 */
export interface FileTarget {
  path: string | null;
  network?: boolean;
  text: string;
  /**
   * For a redirection: indexes (in the analysis's `commands`) of the simple commands it belongs
   * to — the command it is written on, or every command of the statement it follows
   * (`{ a; b; } > f`), not counting commands inside a substitution there (`echo $(pwd) > f` is
   * echo's). Empty when it belongs to none (`> f` alone). The permission check allows the file
   * only as far as these commands are allowed.
   */
  commands?: number[];
}

/**
 * The files a redirection word names, one per directory the command may run in (`dirs`, null
 * when unknown). Several words ("ambiguous redirect"), a glob or a computed part: unknown.
 */
export function redirectTargets(w: ShellWord, text: string, dirs: readonly string[] | null): FileTarget[] {
  const unknown: FileTarget[] = [{ path: null, text }];
  if (!w.fields || w.fields.length !== 1 || w.glob) return unknown;
  const v = w.fields[0] as string;
  // bash opens a socket for these names in a redirection, whatever the file system holds.
  if (/^\/+dev\/+(tcp|udp)(\/|$)/.test(v)) return [{ path: null, network: true, text }];
  if (isAbsolute(v)) return [{ path: v, text }];
  if (dirs === null) return unknown;
  return dirs.map((d) => ({ path: `${d}/${v}`, text }));
}

export const LIST_LIKE = new Set(['list', 'pipeline', 'negated_command']);
/** Nodes with nothing inside worth a visit (plain words, numbers, names, operators). */
export const LEAVES = new Set(['word', 'number', 'variable_name', 'string_content', 'heredoc_content', 'file_descriptor', ';', '&&', '||', '|', '&', '(', ')', '{', '}', 'then', 'do', 'done', 'fi']);

/** A pipeline element that tree-sitter built from a list that bash would not pipe as a whole. */
export function misparsedList(n: Node): boolean {
  if (n.type === 'list') return true;
  const body = n.type === 'redirected_statement' ? n.childForFieldName('body') : null;
  return !!body && LIST_LIKE.has(body.type);
}

/** The operator of a redirection, its unnamed tokens joined (`>`, `>>`, `<&`…). */
export function operator(r: Node): string {
  let op = '';
  for (const c of r.children) if (c && !c.isNamed) op += c.type;
  return op;
}

export function isStdinRedirect(r: Node): boolean {
  return /^\d*<$/.test(operator(r));
}
