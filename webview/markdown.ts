import DOMPurify from 'dompurify';
import { Marked } from 'marked';

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Markdown as the model writes it; raw HTML in the text is shown as text, never interpreted. */
const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
  FORBID_ATTR: ['style', 'srcset'],
};

/**
 * Renders assistant markdown to sanitized HTML. Raw HTML is escaped by the renderer and the
 * result goes through DOMPurify as a second line of defence; links stay as <a href> and are
 * intercepted by the transcript (opened by the host only if http(s)).
 */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, PURIFY_CONFIG);
}
