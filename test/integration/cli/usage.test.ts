import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle } from './cliHarness';

/**
 * Usage errors of every `keel` command, as a person meets them: the built CLI as a child process.
 * Each is one line on stderr, `keel <command>: <problem> (see keel <command> --help)`, the prefix
 * once, no help dump, nothing on stdout, exit 2.
 */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cli: string;
let home: string;
let workspace: string;

function keel(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH, HOME: home, KEEL_HOME: join(home, 'store'), ...env }, cwd: workspace }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  cli = await cliBundle();
  home = mkdtempSync(join(tmpdir(), 'keel-usage-home-'));
  workspace = join(home, 'ws');
  mkdirSync(workspace);
}, 120_000);

/** One usage error: exit 2, one line with the command's prefix once and the pointer to its help. */
function expectUsageLine(r: Ran, command: string, problem: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n');
  expect(lines, r.stderr).toHaveLength(2);
  expect(lines[1]).toBe('');
  const prefix = `keel ${command}: `;
  expect(lines[0]!.startsWith(prefix), r.stderr).toBe(true);
  expect(lines[0]!.endsWith(` (see keel ${command} --help)`), r.stderr).toBe(true);
  const middle = lines[0]!.slice(prefix.length, -` (see keel ${command} --help)`.length);
  expect(middle).toMatch(problem);
  expect(middle).not.toMatch(new RegExp(`^keel ${command}`));
}

describe.concurrent('keel: every usage error is one line and exit 2', () => {
  it('an unknown option of keel run', async () => {
    const r = await keel(['run', 'hi', '--foo']);
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'keel run: unknown option --foo (see keel run --help)\n' });
  });

  it.each([
    [['run'], /^no prompt given$/],
    [['run', '--bogus=1', 'hi'], /^unknown option --bogus$/],
    [['run', 'hi', '-x'], /^unknown option -x$/],
    [['run', 'hi', '--model'], /^--model needs a value$/],
    [['run', 'hi', '--model', '--mode', 'plan'], /^--model needs a value$/],
    [['run', 'hi', '--model', 'a', '--model', 'b'], /^--model is given more than once$/],
    [['run', 'hi', '--mode', 'yolo'], /^--mode must be one of .*\(got "yolo"\)$/],
    [['run', 'hi', '--provider', 'gpt'], /^--provider must be one of/],
    [['run', 'hi', '--output-format', 'xml'], /^--output-format must be text or stream-json/],
    [['run', 'hi', '--max-turns', '0'], /^--max-turns must be a positive integer/],
    [['run', 'hi', '--base-url', 'localhost:11434'], /^--base-url must be an http:\/\/ or https:\/\/ URL/],
    [['run', 'hi', '--workspace', '/nonexistent/keel-ws'], /^the workspace \/nonexistent\/keel-ws is not a folder$/],
    [['run', '--resume', ''], /^--resume needs a task id/],
  ] as const)('keel %j', async (args, problem) => {
    expectUsageLine(await keel([...args]), 'run', problem);
  });

  it.each([
    [['tasks', 'nope'], /^unknown subcommand "nope"$/],
    [['tasks', '--json', 'list'], /^the subcommand .* comes first$/],
    [['tasks', 'list', '--format', 'md'], /^unknown option --format$/],
    [['tasks', 'list', 'extra'], /^unexpected argument "extra"$/],
    [['tasks', 'list', '--json=yes'], /^--json takes no value$/],
    [['tasks', 'show'], /^show needs a task id$/],
    [['tasks', 'delete', 'a', 'b'], /^unexpected argument "b"/],
    [['tasks', 'export', 'abcd'], /^export needs --format md or --format json$/],
    [['tasks', 'export', 'abcd', '--format', 'pdf'], /^export needs --format md or --format json \(got "pdf"\)$/],
  ] as const)('keel %j', async (args, problem) => {
    expectUsageLine(await keel([...args]), 'tasks', problem);
  });

  it.each([
    [['permissions'], /^missing the subcommand \(check\)$/],
    [['permissions', 'chek'], /^unknown subcommand "chek"$/],
    [['permissions', 'check'], /^--tool is required$/],
    [['permissions', 'check', '--tool', 'Bash', '--input', '{'], /^--input is not JSON/],
    [['permissions', 'check', '--tool', 'Bash', '--mode', 'yolo'], /^--mode must be one of/],
    [['permissions', 'check', '--tool', 'Bash', '--frobnicate'], /^unknown option --frobnicate$/],
    [['permissions', 'check', 'Bash'], /^unexpected argument "Bash"$/],
  ] as const)('keel %j', async (args, problem) => {
    expectUsageLine(await keel([...args]), 'permissions', problem);
  });

  it('keel machines with an unknown option', async () => {
    expectUsageLine(await keel(['machines', '--jsn']), 'machines', /^unknown option --jsn$/);
  });

  it('an unknown command or option of keel itself', async () => {
    expect(await keel(['runn', 'hi'])).toEqual({ code: 2, stdout: '', stderr: 'keel: unknown command "runn" (see keel --help)\n' });
    expect(await keel(['--frob'])).toEqual({ code: 2, stdout: '', stderr: 'keel: unknown option --frob (see keel --help)\n' });
  });
});

describe.concurrent('keel: --help of every command prints its help and exits 0', () => {
  it.each([[['--help']], [['run', '--help']], [['run', 'hi', '-h', '--bogus']], [['tasks', '--help']], [['tasks', 'show', '--help']], [['permissions', 'check', '--help']], [['machines', '--help']]] as const)(
    'keel %j',
    async (args) => {
      const r = await keel([...args]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/Usage/);
    },
  );
});

describe('keel run --resume of a finished task', () => {
  let server: FakeModelServer;
  const storage = () => join(home, 'resume-store');
  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('without a follow-up is a usage error (exit 2) that says how to give one; with one it continues', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'First answer.' }] }, { blocks: [{ type: 'text', text: 'Second answer.' }] });
    // --no-memory: no lesson call after each run, so the scripted turns are the runs' own.
    const common = ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--storage', storage(), '--no-memory'];
    const first = await keel(['run', 'hello', ...common, '--output-format', 'stream-json'], { ANTHROPIC_API_KEY: 'sk-test' });
    expect(first.code, first.stderr).toBe(0);
    const taskId = String((JSON.parse(first.stdout.trim().split('\n')[0]!) as { taskId: string }).taskId);

    const bare = await keel(['run', '--resume', taskId, ...common], { ANTHROPIC_API_KEY: 'sk-test' });
    expectUsageLine(bare, 'run', new RegExp(`^task ${taskId} has ended \\(completed\\); give a follow-up message to continue it: keel run --resume ${taskId} "<follow-up>"$`));
    expect(server.requests).toHaveLength(1);

    const more = await keel(['run', '--resume', taskId.slice(0, 8), 'and more', ...common], { ANTHROPIC_API_KEY: 'sk-test' });
    expect(more.code, more.stderr).toBe(0);
    expect(more.stdout).toContain('Second answer.');
    expect(server.requests).toHaveLength(2);
  });
});
