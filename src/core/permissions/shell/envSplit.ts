import type { ShellWord } from './words';

/**
 * `env -S STRING` / `--split-string=STRING` as GNU coreutils' env splits it (env.c, build_argv):
 * blanks separate words outside quotes; `'…'` is literal except `\\` and `\'`; `"…"` keeps
 * blanks and takes escapes; escapes are `\" \# \$ \' \\ \_ \c \f \n \r \t \v` (`\_` separates
 * outside double quotes and is a space inside; `\c` ends the string); `#` at the start of a word
 * starts a comment; `${NAME}` is the variable's run-time value (so the word is computed). Returns
 * null where env would stop with an error (unknown escape, `$` without braces, open quote):
 * env then runs nothing, and the caller treats it as unknown. Pure.
 */
export function splitEnvString(s: string): ShellWord[] | null {
  const parts: { value: string; dynamic: boolean }[] = [];
  let sep = true;
  let sq = false;
  let dq = false;
  /** The word being built; a separator before it starts a new one. */
  const start = (): { value: string; dynamic: boolean } => {
    const last = parts[parts.length - 1];
    if (!sep && last) return last;
    sep = false;
    const w = { value: '', dynamic: false };
    parts.push(w);
    return w;
  };
  let i = 0;
  scan: while (i < s.length) {
    const ch = s[i] as string;
    let add = ch;
    switch (ch) {
      case "'":
        if (dq) break;
        sq = !sq;
        start();
        i++;
        continue;
      case '"':
        if (sq) break;
        dq = !dq;
        start();
        i++;
        continue;
      case ' ':
      case '\t':
      case '\n':
      case '\v':
      case '\f':
      case '\r':
        if (sq || dq) break;
        sep = true;
        while (i < s.length && ' \t\n\v\f\r'.includes(s[i] as string)) i++;
        continue;
      case '#':
        if (!sep) break;
        break scan;
      case '\\': {
        const n = s[i + 1];
        if (sq && n !== '\\' && n !== "'") break;
        i++;
        switch (n) {
          case '"':
          case '#':
          case '$':
          case "'":
          case '\\':
            add = n;
            break;
          case '_':
            if (!dq) {
              i++;
              sep = true;
              continue;
            }
            add = ' ';
            break;
          case 'c':
            if (dq) return null;
            break scan;
          case 'f':
            add = '\f';
            break;
          case 'n':
            add = '\n';
            break;
          case 'r':
            add = '\r';
            break;
          case 't':
            add = '\t';
            break;
          case 'v':
            add = '\v';
            break;
          default:
            return null;
        }
        break;
      }
      case '$': {
        if (sq) break;
        const m = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}/.exec(s.slice(i));
        if (!m) return null;
        // Unset variables vanish, set ones join the current word: either way it is computed.
        const w = start();
        w.value += '\u0000';
        w.dynamic = true;
        i += m[0].length;
        continue;
      }
      default:
        break;
    }
    start().value += add;
    i++;
  }
  if (sq || dq) {
    // An open quote is an error unless the string ended early (`#` comment or `\c`).
    if (i >= s.length) return null;
  }
  // env passes each word as it is (no tilde, brace or glob expansion): a known word is its one field.
  return parts.map((w) => ({ value: w.value, dynamic: w.dynamic, glob: false, text: w.value, ...(w.dynamic ? {} : { fields: [w.value] }) }));
}
