/**
 * The HTML page of a chat webview. Pure (no 'vscode'): the caller passes webview URIs as strings.
 * The Content-Security-Policy allows only our bundled script (by nonce), our stylesheets and
 * fonts, and images from the extension or data: URIs. No inline or eval'd script, no remote loads.
 */
export interface WebviewHtmlOptions {
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh random value per page; must be base64/hex characters only. */
  nonce: string;
  scriptUri: string;
  styleUri: string;
  codiconUri: string;
  title: string;
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
  ].join('; ') + ';';
}

export function renderWebviewHtml(o: WebviewHtmlOptions): string {
  if (!/^[A-Za-z0-9+/=_-]+$/.test(o.nonce)) throw new Error('invalid nonce');
  const csp = escapeAttr(contentSecurityPolicy(o.cspSource, o.nonce));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(o.codiconUri)}">
<link rel="stylesheet" href="${escapeAttr(o.styleUri)}">
<title>${escapeAttr(o.title)}</title>
</head>
<body>
<div id="root"></div>
<script nonce="${o.nonce}" src="${escapeAttr(o.scriptUri)}"></script>
</body>
</html>`;
}
