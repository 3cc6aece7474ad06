import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import type { Logger } from './logger';
import { type ViewKind, ViewConnection } from './viewConnection';
import { renderWebviewHtml } from './webviewHtml';

/** Webview options shared by the sidebar view and editor tabs: scripts on, only dist/ and media/ loadable. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')],
  };
}

function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const dist = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', file)).toString();
  return renderWebviewHtml({
    cspSource: webview.cspSource,
    nonce: randomBytes(18).toString('base64'),
    scriptUri: dist('webview.js'),
    styleUri: dist('webview.css'),
    codiconUri: dist('codicon.css'),
    title: 'Keel',
  });
}

let nextViewNumber = 1;

/**
 * Loads the chat page into `webview` and connects it to the controller. The returned
 * disposable detaches the view and removes its listeners; the caller calls it when the view or
 * panel is disposed. Visibility changes must be forwarded with `setVisible`.
 */
export function connectWebview(
  webview: vscode.Webview,
  kind: ViewKind,
  extensionUri: vscode.Uri,
  controller: ChatController,
  log: Logger,
): { connection: ViewConnection; dispose(): void } {
  webview.options = webviewOptions(extensionUri);
  const connection = new ViewConnection(`${kind}-${nextViewNumber++}`, kind, (m) => webview.postMessage(m), log);
  const detach = controller.attach(connection);
  const sub = webview.onDidReceiveMessage((data: unknown) => {
    const message = connection.receive(data);
    if (message) void controller.handle(connection, message);
  });
  webview.html = chatHtml(webview, extensionUri);
  return {
    connection,
    dispose() {
      sub.dispose();
      detach();
      connection.dispose();
    },
  };
}
