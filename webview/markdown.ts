import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { highlight } from './highlight';

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Markdown as the model writes it. Raw HTML in the text is shown as text, never interpreted;
 * images are not loaded (shown as their alt text and address); code blocks are highlighted.
 */
const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    image: ({ href, text }) => `<span class="keel-image-ref">[image: ${escapeHtml(text || 'untitled')}] ${escapeHtml(href)}</span>`,
    code: ({ text, lang }) => {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const label = language ? `<span class="keel-code-lang">${escapeHtml(language)}</span>` : '';
      return `<div class="keel-code">${label}<pre><code class="keel-code-body">${highlight(text, language)}</code></pre></div>`;
    },
  },
});

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'img', 'svg', 'math', 'video', 'audio', 'source', 'picture', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'srcset', 'src', 'action', 'formaction', 'background', 'poster', 'xlink:href'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
};

/**
 * Renders assistant markdown to sanitized HTML. Raw HTML is escaped by the renderer and the
 * result goes through DOMPurify as a second line of defence (no styles, no media, links only
 * http(s)/mailto/fragments); links stay as <a href> and are intercepted by the transcript
 * (opened by the host). Pure apart from DOMPurify's DOM use; never throws on any input.
 */
export function renderMarkdown(text: string): string {
  let html: string;
  try {
    html = marked.parse(text) as string;
  } catch {
    html = `<pre>${escapeHtml(text)}</pre>`;
  }
  return DOMPurify.sanitize(html, PURIFY_CONFIG);
}

/**
 * One line or short paragraph of Markdown (a loop's goal, a judge's reason) as sanitized inline
 * HTML: emphasis, code and links, no block elements, with the same defences as `renderMarkdown`.
 */
export function renderInlineMarkdown(text: string): string {
  let html: string;
  try {
    html = marked.parseInline(text) as string;
  } catch {
    html = escapeHtml(text);
  }
  return DOMPurify.sanitize(html, PURIFY_CONFIG);
}
