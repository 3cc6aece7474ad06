/**
 * The logging surface the extension's vscode-free parts use. In the extension it is the "Keel"
 * LogOutputChannel; in tests, an array. Messages must never contain API keys.
 */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

