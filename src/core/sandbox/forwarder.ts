/**
 * The helper that stands in front of a sandboxed command when the network allow-list is not
 * empty. Inside bwrap's empty network namespace it listens on 127.0.0.1 (a free port), forwards
 * every connection to the proxy's Unix socket bound in from the host, then runs the command with
 * the proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`, their lower-case forms, `ALL_PROXY`,
 * `NO_PROXY` for the sandbox's own loopback, `NODE_USE_ENV_PROXY` for Node's fetch) pointing at
 * that port, and exits as the command did. It is plain JavaScript run by the Node that runs Keel
 * (`process.execPath`, visible on the read-only root; under Electron with ELECTRON_RUN_AS_NODE),
 * so nothing needs installing. It prints nothing of its own unless it cannot start.
 *
 * argv after `--`: socket path, "1" when ELECTRON_RUN_AS_NODE was set only for the helper, then
 * the shell and its arguments.
 */
const FORWARDER_SOURCE = String.raw`'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const [socketPath, electronOnly, shell, ...shellArgs] = process.argv.slice(1);
const server = net.createServer({ pauseOnConnect: true }, (client) => {
  const upstream = net.connect(socketPath);
  const stop = () => { client.destroy(); upstream.destroy(); };
  client.on('error', stop);
  upstream.on('error', stop);
  upstream.on('connect', () => { client.pipe(upstream); upstream.pipe(client); client.resume(); });
});
server.on('error', (err) => {
  process.stderr.write('keel sandbox: the network forwarder could not start: ' + err.message + '\n');
  process.exit(125);
});
server.listen(0, '127.0.0.1', () => {
  const url = 'http://127.0.0.1:' + server.address().port;
  const env = Object.assign({}, process.env);
  if (electronOnly === '1') delete env.ELECTRON_RUN_AS_NODE;
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) env[name] = url;
  env.NO_PROXY = env.no_proxy = 'localhost,127.0.0.1,::1';
  env.NODE_USE_ENV_PROXY = '1';
  const child = spawn(shell, shellArgs, { stdio: 'inherit', env });
  child.on('error', (err) => {
    process.stderr.write('keel sandbox: could not run ' + shell + ': ' + err.message + '\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      try { process.kill(process.pid, signal); } catch {}
      process.exit(128 + (constants.signals[signal] || 0));
    }
    process.exit(code === null ? 1 : code);
  });
});
`;

/**
 * The launcher argv (prepended to `shell -c command` inside bwrap) and the bwrap options it needs
 * for a proxy listening on `socketPath`.
 */
export function forwarderLauncher(socketPath: string, node: string = process.execPath, electron: boolean = process.versions.electron !== undefined): { launcher: string[]; bwrapOptions: string[] } {
  // Under Electron (VS Code desktop) the binary is Node only with ELECTRON_RUN_AS_NODE; the
  // command gets the variable only if it already had it.
  const electronOnly = electron && process.env.ELECTRON_RUN_AS_NODE === undefined;
  return {
    launcher: [node, '-e', FORWARDER_SOURCE, '--', socketPath, electronOnly ? '1' : '0'],
    bwrapOptions: electronOnly ? ['--setenv', 'ELECTRON_RUN_AS_NODE', '1'] : [],
  };
}
