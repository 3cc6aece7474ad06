/**
 * A tiny syntax highlighter for code blocks in answers: comments, strings, numbers and keywords
 * of common languages, as `<span class="tok-…">`. It only ever emits escaped text inside spans
 * of a fixed set of classes, so its output is safe to sanitize and insert. Unknown languages get
 * the generic rules. Pure.
 */

const words = (list: string): string[] => list.split(' ');

const KEYWORDS: Record<string, string[]> = {
  js: words(
    'await async break case catch class const continue debugger default delete do else export extends false finally for from ' +
    'function if import in instanceof let new null of return static super switch this throw true try typeof undefined var ' +
    'void while yield',
  ),
  ts: words('abstract as declare enum implements interface keyof namespace private protected public readonly type unknown never any number string boolean'),
  py: words(
    'and as assert async await break class continue def del elif else except False finally for from global if import in is ' +
    'lambda None nonlocal not or pass raise return True try while with yield self',
  ),
  sh: words('if then else elif fi for while do done case esac in function return export local echo cd set unset'),
  go: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false'),
  rust: words(
    'as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref ' +
    'return self Self static struct super trait true type unsafe use where while',
  ),
  c: words(
    'auto break case char const continue default do double else enum extern float for goto if int long register return short ' +
    'signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete ' +
    'namespace template true false nullptr',
  ),
};

const ALIASES: Record<string, string> = {
  javascript: 'js', jsx: 'js', mjs: 'js', cjs: 'js', typescript: 'ts', tsx: 'ts', json: 'js',
  python: 'py', bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh', golang: 'go', rs: 'rust',
  cpp: 'c', 'c++': 'c', h: 'c', java: 'c', cs: 'c', csharp: 'c', kotlin: 'c', swift: 'c',
};

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function keywordSet(lang: string): Set<string> {
  const l = ALIASES[lang] ?? lang;
  const words = l === 'ts' ? [...KEYWORDS.js!, ...KEYWORDS.ts!] : KEYWORDS[l] ?? [...KEYWORDS.js!, ...KEYWORDS.py!];
  return new Set(words);
}

function hashComments(lang: string): boolean {
  const l = ALIASES[lang] ?? lang;
  return l === 'py' || l === 'sh' || l === 'yaml' || l === 'yml' || l === 'toml' || l === 'ruby' || l === 'rb';
}

/** Longer than this, code is shown without highlighting (it stays fast on huge blocks). */
const MAX_HIGHLIGHT = 20_000;

/** Highlights `code` written in `lang` (a fence info word, may be empty). Returns safe HTML. */
export function highlight(code: string, lang: string): string {
  if (code.length > MAX_HIGHLIGHT) return escapeHtml(code);
  const l = lang.toLowerCase();
  const keywords = keywordSet(l);
  const comment = hashComments(l) ? String.raw`#[^\n]*` : String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/`;
  const re = new RegExp(
    `(${comment})|("(?:[^"\\\\\\n]|\\\\.)*"|'(?:[^'\\\\\\n]|\\\\.)*'|\`(?:[^\`\\\\]|\\\\.)*\`)|(\\b\\d[\\d_]*(?:\\.\\d+)?(?:e[+-]?\\d+)?\\b|\\b0x[\\da-f]+\\b)|([A-Za-z_$][\\w$]*)`,
    'gi',
  );
  let out = '';
  let last = 0;
  for (let m = re.exec(code); m !== null; m = re.exec(code)) {
    out += escapeHtml(code.slice(last, m.index));
    const [text, com, str, num, word] = m;
    if (com !== undefined) out += `<span class="tok-com">${escapeHtml(com)}</span>`;
    else if (str !== undefined) out += `<span class="tok-str">${escapeHtml(str)}</span>`;
    else if (num !== undefined) out += `<span class="tok-num">${escapeHtml(num)}</span>`;
    else if (word !== undefined) {
      const next = code.charAt(m.index + word.length);
      if (keywords.has(word)) out += `<span class="tok-kw">${word}</span>`;
      else if (next === '(') out += `<span class="tok-fn">${word}</span>`;
      else out += escapeHtml(word);
    } else out += escapeHtml(text);
    last = m.index + text.length;
  }
  return out + escapeHtml(code.slice(last));
}
