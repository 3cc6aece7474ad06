import * as esbuild from 'esbuild';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

/**
 * Bundles the CLI exactly as scripts/build.mjs does (src/cli/main.ts, cjs, node20) into `dir`.
 * A private copy: other builds of dist/ (which start by deleting it) cannot pull it away mid-test.
 */
export async function buildCli(dir: string): Promise<string> {
  const outfile = join(dir, 'cli.js');
  await esbuild.build({
    entryPoints: [join(ROOT, 'src/cli/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
    banner: { js: '#!/usr/bin/env node' },
  });
  return outfile;
}

export interface CliRun {
  child: ChildProcess;
  lines: string[];
  stderr: () => string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  /** Resolves when a stdout line satisfies `pred` (rejects if the process exits first). */
  waitForLine(pred: (line: string, all: string[]) => boolean): Promise<void>;
}

/**
 * Starts `node cli.js args…` with its own env; stdout is split into lines as they arrive. Without a
 * HOME in `env` the child gets a fresh empty folder as its home: never a made-up path such as
 * `/nonexistent`, which a CLI running as root creates (`~/.keel`) and leaves for every later test.
 */
export function startCli(cli: string, args: string[], env: Record<string, string>): CliRun {
  const home = env.HOME ?? mkdtempSync(join(tmpdir(), 'keel-cli-home-'));
  const child = spawn(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let err = '';
  let partial = '';
  const waiters = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts.filter((l) => l.length > 0));
    for (const w of [...waiters]) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | string>((res) => child.on('close', (code, signal) => res(code ?? signal ?? -1)));
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    waitForLine(pred) {
      return new Promise((res, rej) => {
        const check = () => {
          if (lines.some((l) => pred(l, lines))) {
            waiters.delete(check);
            res();
          }
        };
        waiters.add(check);
        void exited.then((code) => {
          if (waiters.has(check)) {
            waiters.delete(check);
            rej(new Error(`the CLI exited (${code}) before the awaited line; stderr: ${err}`));
          }
        });
        check();
      });
    },
  };
}

/** Runs the CLI to completion. */
export async function runCli(cli: string, args: string[], env: Record<string, string>): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const run = startCli(cli, args, env);
  const code = await run.exited;
  return { code, stdout: run.lines.join('\n'), stderr: run.stderr() };
}
