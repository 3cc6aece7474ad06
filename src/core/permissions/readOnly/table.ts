import { optionTable, type OptionDef, type OptionTable, type TableSettings } from '../shell/options';
import type { RO } from './types';

const EFFECTS: Record<string, RO> = { '<': 'read', '<:': 'readList', '>': 'write', '@': 'target', '!': 'unsafe', '*': 'opaque' };

/**
 * A compact notation for read-only option tables, one token per option, separated by blanks:
 * `SHORTS/long/long2` then an argument marker (`=` required, `=?` optional) then an effect
 * marker (none: safe, `<` reads the named file, `<:` reads a colon-separated list of files,
 * `>` writes the named file as a side output, `@` read by the command's operand function,
 * `!` unsafe, `*` opens files Keel cannot name). Examples: `a/all`, `/block-size=`, `o/output=!`, `/files0-from=<`, `cC/complement`,
 * `R!`. Parsed once at module load; a malformed token throws (a programming error).
 */
export function roTable(program: string, spec: string, settings: TableSettings<RO> = {}): OptionTable<RO> {
  const defs: OptionDef<RO>[] = [];
  for (const token of spec.split(/\s+/).filter(Boolean)) {
    const m = /^([^/=!<>@*]*)((?:\/[^/=!<>@*]+)*)(=\??)?(<:|<|>|@|!|\*)?$/.exec(token);
    if (!m) throw new Error(`${program}: bad option token ${token}`);
    const [, shorts = '', longs = '', arg, effect] = m;
    defs.push({
      ...(shorts ? { short: shorts } : {}),
      ...(longs ? { long: longs.slice(1).split('/') } : {}),
      arg: arg === '=' ? 'required' : arg === '=?' ? 'optional' : 'none',
      effect: EFFECTS[effect ?? ''] ?? 'safe',
    });
  }
  return optionTable(program, defs, settings);
}

/** GNU coreutils' --help and --version. */
export const GNU = '/help /version';
