import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { expect, onTestFinished } from 'vitest';
import { buildWorker } from '../../../scripts/sharedCore.mjs';
import { Changes } from '../../unit/helpers/changes';

/**
 * Runs the real CLI (`node cli.js run …`) as a child process. The bundle is dist/cli.js when it
 * is newer than every source file; otherwise it is built once, with the same esbuild options as
 * scripts/build.mjs, into a private temp folder (so this test never deletes or rewrites dist/
 * while another process packages or runs it), with the tree-sitter wasm files beside it.
 */
const ROOT = resolve(__dirname, '../../..');

function newestSource(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, name.name);
    newest = Math.max(newest, name.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

let cliPath: Promise<string> | undefined;

export function cliBundle(): Promise<string> {
  cliPath ??= (async () => {
    const dist = join(ROOT, 'dist/cli.js');
    const fresh = (p: string) => existsSync(p) && statSync(p).mtimeMs > newestSource(join(ROOT, 'src'));
    if (fresh(dist) && fresh(join(ROOT, 'dist/worker.js')) && fresh(join(ROOT, 'dist/core.js'))) return dist;
    const out = mkdtempSync(join(tmpdir(), 'keel-cli-build-'));
    const options = { bundle: true, platform: 'node' as const, format: 'cjs' as const, target: 'node20', logLevel: 'silent' as const, legalComments: 'none' as const };
    await esbuild.build({ ...options, entryPoints: { cli: join(ROOT, 'src/cli/main.ts') }, outdir: out, banner: { js: '#!/usr/bin/env node' } });
    // With the worker bundle and core.js beside it, as in dist/: `--workers N` runs its workers from it.
    await buildWorker(esbuild, options, out, 'src/cli/workerEntry.ts');
    for (const [pkg, file] of [['web-tree-sitter', 'web-tree-sitter.wasm'], ['tree-sitter-bash', 'tree-sitter-bash.wasm']] as const) {
      const p = join(ROOT, 'node_modules', pkg, file);
      if (existsSync(p)) copyFileSync(p, join(out, file));
    }
    return join(out, 'cli.js');
  })();
  return cliPath;
}

export interface CliRun {
  child: ChildProcess;
  /** Parsed stream-json lines so far. */
  events: Record<string, unknown>[];
  /** Notified at each chunk of output and when the process ends (wait on it, not on the clock). */
  changes: Changes;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The --storage folder the run used (pass it to a later runCli to see the same tasks). */
  storage: string;
}

export async function runCli(args: string[], env: Record<string, string | undefined> = {}, storageDir?: string): Promise<CliRun> {
  const cli = await cliBundle();
  const storage = storageDir ?? mkdtempSync(join(tmpdir(), 'keel-cli-store-'));
  mkdirSync(storage, { recursive: true });
  const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: storage, KEEL_HOME: storage };
  // KEEL_WORKERS=N runs the whole suite with execution in workers (keel run's default --workers).
  if (process.env.KEEL_WORKERS) childEnv.KEEL_WORKERS = process.env.KEEL_WORKERS;
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  const child = spawn(process.execPath, [cli, ...args, '--storage', storage], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const events: Record<string, unknown>[] = [];
  const changes = new Changes();
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    // Only a chunk with a newline finishes lines: splitting the whole unfinished line at every
    // chunk was quadratic in a long line (a 50 MB answer's `message` event is one 52 MB line:
    // ~800 chunks, each flattening and scanning what had come so far, ~15 s of CPU).
    const nl = d.lastIndexOf('\n');
    if (nl === -1) {
      partial += d;
      changes.notify();
      return;
    }
    const lines = (partial + d.slice(0, nl)).split('\n');
    partial = d.slice(nl + 1);
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* text output */
      }
    }
    changes.notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    changes.notify();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('close', (code, signal) => res({ code, signal })));
  void exit.then(changes.notify);
  // A run the test left running (it failed, or timed out waiting) does not outlive its test.
  try {
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
  } catch {
    /* started outside a test (a hook): the hook's own cleanup ends it */
  }
  return { child, storage, events, changes, stdout: () => out, stderr: () => err, exit };
}

/**
 * Waits for `run` to exit, at most `withinMs`; one still running then is killed (SIGKILL) and the
 * test fails with its stderr.
 */
export async function endedWithin(run: CliRun, withinMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), withinMs)));
  const result = await Promise.race([run.exit, bound]);
  clearTimeout(timer);
  if (result === 'still running') run.child.kill('SIGKILL');
  expect(result, run.stderr()).not.toBe('still running');
}

export const ofType = (events: Record<string, unknown>[], type: string) => events.filter((e) => e.type === type);

/** `node cli.js mcp …` with its own Keel home (runCli appends --storage, which `mcp` has no use for). */
export async function keelMcp(home: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = await cliBundle();
  const child = spawn(process.execPath, [cli, 'mcp', ...args], { env: { PATH: process.env.PATH, HOME: home, KEEL_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((res) => child.once('close', (c) => res(c)));
  return { code, stdout, stderr };
}

/** Every 16-character piece of `secret` that `text` still holds (empty when none). */
export function pieces(text: string, secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 16 <= secret.length; i += 4) if (text.includes(secret.slice(i, i + 16))) out.push(secret.slice(i, i + 16));
  return out;
}

/** Every file below `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}
