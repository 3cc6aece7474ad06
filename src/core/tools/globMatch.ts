/**
 * Glob matching with ripgrep/gitignore conventions, for filtering paths relative to a search root:
 * - a pattern without "/" matches the file name at any depth ("*.ts");
 * - a pattern with "/" matches the whole relative path from the root ("src/**\/*.ts"), a leading
 *   "/" or "./" is ignored;
 * - "*" and "?" never cross "/", "**\/" spans zero or more directories, a trailing "/**" matches
 *   everything below, "[abc]" / "[!abc]" are classes, "{a,b}" alternatives (nestable), "\" escapes.
 * Case-sensitive. Never throws: an unclosed "[" is a literal, an unclosed "{" is closed at the end.
 */
export function createGlobMatcher(pattern: string): (relPath: string) => boolean {
  let p = pattern.startsWith('./') ? pattern.slice(2) : pattern.startsWith('/') ? pattern.slice(1) : pattern;
  if (p.endsWith('/')) p = p.slice(0, -1);
  const basenameOnly = !p.includes('/');
  const re = new RegExp(`^${translate(p)}$`);
  return (relPath) => {
    const norm = relPath.replace(/\\/g, '/');
    return re.test(basenameOnly ? norm.slice(norm.lastIndexOf('/') + 1) : norm);
  };
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/;

function translate(glob: string): string {
  let out = '';
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '\\' && i + 1 < glob.length) {
      out += escapeChar(glob[++i] ?? '');
    } else if (c === '*') {
      if (glob[i + 1] === '*') {
        const atSegmentStart = i === 0 || glob[i - 1] === '/';
        if (atSegmentStart && glob[i + 2] === '/') {
          out += '(?:[^/]*/)*';
          i += 2;
        } else if (atSegmentStart && i + 2 === glob.length) {
          out += '.*';
          i += 1;
        } else {
          out += '[^/]*';
          i += 1;
        }
      } else out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
      } else {
        let body = glob.slice(i + 1, close);
        const negate = body.startsWith('!') || body.startsWith('^');
        if (negate) body = body.slice(1);
        out += `[${negate ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/]/g, '\\]')}]`;
        i = close;
      }
    } else if (c === '{') {
      braceDepth++;
      out += '(?:';
    } else if (c === '}' && braceDepth > 0) {
      braceDepth--;
      out += ')';
    } else if (c === ',' && braceDepth > 0) {
      out += '|';
    } else {
      out += escapeChar(c);
    }
  }
  // An unclosed "{" would leave a broken group: close it so the pattern still compiles.
  out += ')'.repeat(braceDepth);
  return out;
}

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}
