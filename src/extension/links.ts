/**
 * Whether a link clicked in the chat may be opened outside VS Code without asking: only absolute
 * http(s) URLs. Pure; never throws.
 */
export function isExternalHttpLink(href: string): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
}

const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'command:', 'blob:']);

/**
 * Links the chat never opens, even when asked: schemes that run code or commands, and anything
 * that is not an absolute URL (relative paths, fragments). Pure; never throws.
 */
export function isRefusedLink(href: string): boolean {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return true;
  }
  return REFUSED_SCHEMES.has(url.protocol.toLowerCase());
}
