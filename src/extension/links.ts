/**
 * Whether a link clicked in the chat may be opened outside VS Code: only absolute http(s) URLs.
 * Anything else (command:, file:, javascript:, vscode:, relative paths) is refused, so text a
 * model wrote cannot run commands or open local files. Pure; never throws.
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
