/**
 * A repository's own git config, read without running git, and the allowlist of settings that
 * cannot make a read-only git command run a program, read files elsewhere or reach the
 * network. Anything else (core.pager, core.editor, core.fsmonitor, diff.external,
 * diff.*.textconv, filter.*, gpg.program, pager.*, include.path, …) or anything the parser does
 * not understand makes git commands ask. Pure.
 */

export interface ConfigEntry {
  /** Lower case. */
  section: string;
  /** Case-sensitive; undefined for `[core]`. */
  subsection?: string;
  /** Lower case. */
  key: string;
  /** undefined: the key alone (boolean true). */
  value?: string;
}

/** Parses git config text; null when it is not valid config as git reads it. */
export function parseGitConfig(text: string): ConfigEntry[] | null {
  const out: ConfigEntry[] = [];
  let section: string | undefined;
  let subsection: string | undefined;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    let line = (lines[n] as string).replace(/\r$/, '');
    let rest = line.trimStart();
    if (rest === '' || rest.startsWith('#') || rest.startsWith(';')) continue;
    if (rest.startsWith('[')) {
      const h = /^\[([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\]/.exec(rest);
      if (!h?.[1]) return null;
      const name = h[1];
      if (h[2] !== undefined) {
        if (name.includes('.')) return null;
        section = name.toLowerCase();
        subsection = h[2].replace(/\\(.)/g, '$1');
      } else {
        const dot = name.indexOf('.');
        section = (dot < 0 ? name : name.slice(0, dot)).toLowerCase();
        subsection = dot < 0 ? undefined : name.slice(dot + 1).toLowerCase();
      }
      rest = rest.slice(h[0].length).trimStart();
      if (rest === '' || rest.startsWith('#') || rest.startsWith(';')) continue;
    }
    if (section === undefined) return null;
    const k = /^([A-Za-z][A-Za-z0-9-]*)\s*(=)?/.exec(rest);
    if (!k?.[1]) return null;
    const entry: ConfigEntry = { section, key: k[1].toLowerCase(), ...(subsection !== undefined ? { subsection } : {}) };
    if (!k[2]) {
      const after = rest.slice(k[0].length).trim();
      if (after !== '' && !after.startsWith('#') && !after.startsWith(';')) return null;
      out.push(entry);
      continue;
    }
    // The value: quotes, escapes, comments, and lines continued by a trailing backslash.
    let raw = rest.slice(k[0].length);
    let value = '';
    let quoted = false;
    let pendingSpace = '';
    for (;;) {
      let i = 0;
      let continued = false;
      for (; i < raw.length; i++) {
        const c = raw[i] as string;
        if (c === '\\') {
          const e = raw[i + 1];
          if (e === undefined) {
            continued = true;
            break;
          }
          const map: Record<string, string> = { n: '\n', t: '\t', b: '\b', '"': '"', '\\': '\\' };
          const m = map[e];
          if (m === undefined) return null;
          value += pendingSpace + m;
          pendingSpace = '';
          i++;
        } else if (c === '"') quoted = !quoted;
        else if (!quoted && (c === '#' || c === ';')) break;
        else if (!quoted && (c === ' ' || c === '\t')) {
          if (value !== '') pendingSpace += c;
        } else {
          value += pendingSpace + c;
          pendingSpace = '';
        }
      }
      if (!continued) break;
      n++;
      if (n >= lines.length) return null;
      raw = (lines[n] as string).replace(/\r$/, '');
      line = raw;
    }
    if (quoted) return null;
    out.push({ ...entry, value });
  }
  return out;
}

const FALSE = /^(false|no|off|0|)$/i;

/** Matches exactly one of `names` (plain words, no pattern characters). */
function exactly(...names: string[]): RegExp {
  return new RegExp(`^(${names.join('|')})$`);
}

/** Keys git reads from a repository's config that only change what is shown, per section. */
const SAFE: Record<string, RegExp> = {
  core: exactly(
    'repositoryformatversion', 'filemode', 'bare', 'logallrefupdates', 'ignorecase', 'precomposeunicode', 'symlinks', 'autocrlf', 'eol',
    'safecrlf', 'quotepath', 'abbrev', 'compression', 'loosecompression', 'packedgitlimit', 'packedgitwindowsize', 'deltabasecachelimit',
    'bigfilethreshold', 'checkstat', 'trustctime', 'untrackedcache', 'preloadindex', 'fscache', 'longpaths', 'sharedrepository', 'whitespace',
    'commentchar', 'commentstring', 'notesref', 'sparsecheckout', 'sparsecheckoutcone', 'multipackindex', 'commitgraph', 'protecthfs',
    'protectntfs', 'warnambiguousrefs', 'filesreflocktimeout', 'packedrefstimeout', 'fsync', 'fsyncmethod', 'fsyncobjectfiles',
    'restrictinheritedhandles', 'createobject', 'hidedotfiles', 'checkroundtripencoding', 'hookspath',
  ),
  extensions: /^(objectformat|worktreeconfig|refstorage|preciousobjects|noop)$/,
  user: /./,
  author: /./,
  committer: /./,
  init: /./,
  pull: /./,
  push: /./,
  fetch: /./,
  rebase: /./,
  color: /./,
  column: /./,
  advice: /./,
  gc: /./,
  pack: /./,
  index: /^(version|threads|skiphash|sparse|recordendofindexentries|recordoffsettable)$/,
  feature: /./,
  status: /./,
  format: /^pretty$/,
  merge: /^(ff|conflictstyle|log|renames|renamelimit|stat|autostash|verbosity|branchdesc|directoryrenames)$/,
  http: /./,
  https: /./,
  gui: /./,
  i18n: /./,
  grep: /./,
  blame: /^(blankboundary|coloring|date|showemail|showroot|markunblamablelines|markignoredlines)$/,
  tag: /^(sort|forcesignannotated|gpgsign)$/,
  versionsort: /./,
  commit: /^(gpgsign|verbose|cleanup|status)$/,
  gpg: /^format$/,
  alias: /./,
  safe: /./,
  maintenance: /^(auto|strategy)$/,
  rerere: /./,
  stash: /./,
  checkout: /./,
  clone: /./,
  worktree: /^guessremote$/,
  apply: /^whitespace$/,
  notes: /./,
  lfs: /^repositoryformatversion$/,
};

/** Keys of sections with a subsection (`[remote "origin"]`). */
const SAFE_SUB: Record<string, RegExp> = {
  branch: /./,
  remote: /^(url|pushurl|fetch|push|mirror|skipdefaultupdate|skipfetchall|tagopt|prune|prunetags|followremotehead|proxyauthmethod)$/,
  url: /^(insteadof|pushinsteadof)$/,
  diff: /^(xfuncname|funcname|wordregex|binary)$/,
  submodule: /^(url|path|branch|active|ignore|fetchrecursesubmodules|shallow|update)$/,
  color: /./,
  http: /./,
  alias: /./,
  gui: /./,
};
const SAFE_DIFF = exactly(
  'renames', 'algorithm', 'colormoved', 'colormovedws', 'mnemonicprefix', 'noprefix', 'context', 'interhunkcontext', 'ignoresubmodules',
  'submodule', 'wordregex', 'indentheuristic', 'suppressblankempty', 'statgraphwidth', 'statnamewidth', 'dirstat', 'relative', 'renamelimit',
  'autorefreshindex', 'srcprefix', 'dstprefix',
);
const SAFE_LOG = /^(date|decorate|abbrevcommit|follow|graphcolors|showroot|mailmap|excludedecoration|initialdecorationset|diffmerges)$/;
const SAFE_SUBMODULE = /^(recurse|fetchjobs|alternatelocation|alternateerrorstrategy|propagatebranches|active)$/;

/** Why this setting could make a read-only git command run code or read elsewhere, or null. */
export function unsafeSetting(e: ConfigEntry): string | null {
  const name = `${e.section}${e.subsection !== undefined ? `.${e.subsection}` : ''}.${e.key}`;
  const bad = (): string => `the repository's git config sets ${name}`;
  if (e.section === 'core' && e.key === 'fsmonitor') return e.subsection === undefined && FALSE.test(e.value ?? 'true') ? null : bad();
  if (e.section === 'log' && e.subsection === undefined) {
    if (e.key === 'showsignature') return FALSE.test(e.value ?? 'true') ? null : bad();
    return SAFE_LOG.test(e.key) ? null : bad();
  }
  if (e.section === 'submodule' && e.subsection !== undefined && e.key === 'update') return /^(checkout|rebase|merge|none)$/.test(e.value ?? '') ? null : bad();
  if (e.subsection === undefined) {
    if (e.section === 'diff') return SAFE_DIFF.test(e.key) ? null : bad();
    if (e.section === 'submodule') return SAFE_SUBMODULE.test(e.key) ? null : bad();
    return Object.hasOwn(SAFE, e.section) && SAFE[e.section]?.test(e.key) ? null : bad();
  }
  return Object.hasOwn(SAFE_SUB, e.section) && SAFE_SUB[e.section]?.test(e.key) ? null : bad();
}
