import { basename, dirname, isAbsolute } from 'node:path';
import type { FsView } from '../fsView';
import { resolvePhysical } from '../physical';

/** Where system programs live: a program found directly in one of them is what its name says. */
const SYSTEM_DIRS = ['/bin/', '/usr/bin/', '/usr/local/bin/', '/sbin/', '/usr/sbin/', '/usr/local/sbin/'];

/** The name a rule sees: `/usr/bin/git` is `git` (only for system directories, as written). */
function commandKey(name: string): { base: string; trusted: boolean } {
  if (!name.includes('/')) return { base: name, trusted: true };
  return { base: basename(name), trusted: SYSTEM_DIRS.some((d) => name.startsWith(d) && !name.slice(d.length).includes('/')) };
}

/** What a command word runs (see `programKey`). */
export interface ProgramKey {
  /** The name of the program that runs (the real file's name for a path): what Keel parses it as. */
  base: string;
  /** The name allow rules see (`/usr/bin/python3` stays python3 though it links to python3.11). */
  ruleName: string;
  /** Other names deny rules see (the name as written, the real file's name). */
  aliases: string[];
  /** A bare name (PATH) or a path that resolves to a file directly in a system directory. */
  trusted: boolean;
}

/**
 * What a command word runs. A bare name is looked up in PATH: trusted. A path is resolved as the
 * kernel opens it (symlinks first, then `..`) from every directory the command may run in, and is
 * trusted only when each resolution is the same file directly in a system directory: then
 * `/usr/bin/../bin/env` is env, and a link named `ls` pointing at /bin/rm is rm. Anything else —
 * a program in the workspace, a path that does not resolve, an unknown directory — is untrusted:
 * it gets no wrapper, runner or read-only meaning, and only a rule naming it as written allows it.
 */
export function programKey(name: string, cwds: readonly string[] | null, fs: FsView): ProgramKey {
  if (!name.includes('/')) return { base: name, ruleName: name, aliases: [], trusted: true };
  const written = basename(name);
  const candidates = isAbsolute(name) ? [name] : (cwds ?? []).map((d) => `${d}/${name}`);
  const reals = new Set<string>();
  for (const c of candidates) {
    const r = resolvePhysical(c, '/', fs);
    if (!r.ok) return { base: written, ruleName: written, aliases: [], trusted: false };
    reals.add(r.path);
  }
  const real = reals.size === 1 ? ([...reals][0] as string) : undefined;
  const realName = real === undefined ? written : basename(real);
  const aliases = [...new Set([written, realName])];
  const trusted = real !== undefined && SYSTEM_DIRS.includes(`${dirname(real)}/`) && fs.lstat(real).kind === 'file';
  if (!trusted) return { base: realName, ruleName: written, aliases, trusted: false };
  return { base: realName, ruleName: commandKey(name).trusted ? written : realName, aliases, trusted: true };
}
