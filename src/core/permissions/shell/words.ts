import type { Node } from 'web-tree-sitter';

/**
 * A shell word after quote removal. `value` is what bash would pass when `dynamic` is false;
 * `dynamic` means part of it is only known at run time (a variable, a substitution, a brace
 * expansion); `glob` means it holds an unquoted pattern bash would expand to file names.
 */
export interface ShellWord {
  value: string;
  dynamic: boolean;
  glob: boolean;
  /** The source text, for messages. */
  text: string;
}

const DYNAMIC_KINDS = new Set(['simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion']);

/** Evaluates a word-like node statically. Never throws. */
export function evalWord(node: Node): ShellWord {
  const acc = { value: '', dynamic: false, glob: false };
  addNode(node, acc);
  return { ...acc, text: node.text };
}

interface Acc {
  value: string;
  dynamic: boolean;
  glob: boolean;
}

function addNode(node: Node, acc: Acc): void {
  switch (node.type) {
    case 'word':
    case 'number':
      addBare(node.text, acc);
      return;
    case 'raw_string':
      acc.value += node.text.slice(1, -1);
      return;
    case 'ansi_c_string':
      acc.value += decodeAnsiC(node.text.slice(2, -1));
      return;
    case 'string':
    case 'translated_string':
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.type === 'string_content') acc.value += unescapeDouble(c.text);
        else {
          acc.dynamic = true;
          acc.value += '\u0000';
        }
      }
      return;
    case 'concatenation':
      for (const c of node.children) if (c) addNode(c, acc);
      return;
    default:
      if (!DYNAMIC_KINDS.has(node.type) && !node.isNamed) {
        addBare(node.text, acc);
        return;
      }
      acc.dynamic = true;
      acc.value += '\u0000';
  }
}

/** Unquoted text: backslash escapes, line continuations, globs and brace expansions. */
function addBare(text: string, acc: Acc): void {
  let braceOpen = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\') {
      const next = text[i + 1];
      i++;
      if (next === undefined || next === '\n') continue;
      acc.value += next;
      continue;
    }
    if (ch === '*' || ch === '?') acc.glob = true;
    else if (ch === '[' && text.indexOf(']', i + 2) > i) acc.glob = true;
    else if ((ch === '@' || ch === '!' || ch === '+') && text[i + 1] === '(') acc.glob = true;
    else if (ch === '{') braceOpen = i;
    else if (ch === '}' && braceOpen >= 0) {
      const inner = text.slice(braceOpen + 1, i);
      if (inner.includes(',') || inner.includes('..')) acc.dynamic = true;
    } else if (ch === '$') acc.dynamic = true;
    acc.value += ch;
  }
}

function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** Decodes the body of `$'…'` as bash does. */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const n = body[i + 1];
    if (n === undefined) {
      out += '\\';
      break;
    }
    const simple = SIMPLE_ESCAPES[n];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    const take = (re: RegExp, max: number, from: number): string => {
      let s = '';
      while (s.length < max && from + s.length < body.length && re.test(body[from + s.length] as string)) s += body[from + s.length];
      return s;
    };
    if (n === 'x') {
      const h = take(/[0-9a-fA-F]/, 2, i + 2);
      if (h) out += String.fromCharCode(parseInt(h, 16));
      else out += '\\x';
      i += 1 + h.length;
    } else if (n === 'u' || n === 'U') {
      const h = take(/[0-9a-fA-F]/, n === 'u' ? 4 : 8, i + 2);
      if (h) out += String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff));
      else out += `\\${n}`;
      i += 1 + h.length;
    } else if (/[0-7]/.test(n)) {
      const o = take(/[0-7]/, 3, i + 1);
      out += String.fromCharCode(parseInt(o, 8) & 0xff);
      i += o.length;
    } else if (n === 'c' && body[i + 2] !== undefined) {
      out += String.fromCharCode((body.charCodeAt(i + 2) & 0x1f) >>> 0);
      i += 2;
    } else {
      out += `\\${n}`;
      i++;
    }
  }
  return out;
}
