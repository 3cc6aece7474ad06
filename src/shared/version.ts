/** Keel's version (the CLI's --version, a host's AppStarted on its event bus). */
export const KEEL_VERSION = '0.1.0';
