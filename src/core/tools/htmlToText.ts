/**
 * Turns HTML into readable plain text without a parser dependency: drops scripts, styles and
 * other non-content elements, keeps block structure as line breaks, keeps <pre> whitespace,
 * marks headings and list items, and decodes entities. Good enough for documentation pages;
 * not a faithful renderer.
 */
export function htmlToText(html: string): string {
  let s = html;
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(s)?.[1];
  s = s.replace(/<!--[\s\S]*?-->/g, '');
  s = s.replace(/<(script|style|noscript|template|svg|head|iframe|object|canvas)\b[\s\S]*?<\/\1\s*>/gi, '');

  // <pre> keeps its whitespace: park each block behind a placeholder.
  const pres: string[] = [];
  s = s.replace(/<pre\b[^>]*>([\s\S]*?)<\/pre\s*>/gi, (_m, inner: string) => {
    pres.push(decodeEntities(inner.replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]+>/g, '')));
    return `\n\uE000PRE${pres.length - 1}\uE001\n`;
  });

  s = s.replace(/<h([1-6])\b[^>]*>/gi, (_m, level: string) => `\n\n${'#'.repeat(Number(level))} `);
  s = s.replace(/<li\b[^>]*>/gi, '\n- ');
  s = s.replace(/<br\s*\/?>/gi, '\n');
  s = s.replace(/<\/?(p|div|section|article|header|footer|nav|main|aside|blockquote|ul|ol|table|tr|h[1-6]|dl|dt|dd|figure|figcaption|form|hr)\b[^>]*>/gi, '\n\n');
  s = s.replace(/<\/(td|th)\s*>/gi, '\t');
  s = s.replace(/<[^>]+>/g, '');
  s = decodeEntities(s);

  s = s
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  s = s.replace(/\uE000PRE(\d+)\uE001/g, (_m, i: string) => pres[Number(i)] ?? '');
  const heading = title ? decodeEntities(title).replace(/\s+/g, ' ').trim() : '';
  return heading && !s.startsWith(heading) ? `${heading}\n\n${s}` : s;
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  middot: '·',
  bull: '•',
  times: '×',
  rarr: '→',
  larr: '←',
};

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED[body.toLowerCase()] ?? m;
  });
}
