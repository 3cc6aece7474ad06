/**
 * Text that Keel places inside a wrapper of the system prompt (`<memory>…</memory>`,
 * `<instructions file="…">…</instructions>`) comes from files a repository or a model wrote. It is
 * quoted so it cannot close its wrapper or open another: `&` and `<` are written as `&amp;` and
 * `&lt;`, so no tag can appear inside it, whatever it holds (`</memory>`, `</instructions>`,
 * `<system>`). The wrapper's own text tells the model how to read them.
 */
export const QUOTED_NOTE = 'In the quoted text, &lt; stands for < and &amp; for &.';

/** `text` with `&` and `<` escaped: it holds no tag. Pure. */
export function quoteForPrompt(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/** A value for a wrapper's attribute (`file="…"`): also `"` and `>` escaped, and on one line. Pure. */
export function quoteAttribute(value: string): string {
  return quoteForPrompt(value).replace(/"/g, '&quot;').replace(/>/g, '&gt;').replace(/[\r\n\t]+/g, ' ');
}
