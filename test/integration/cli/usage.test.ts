import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

/**
 * An absolute path that is not there: inside a fresh folder of this run, never a made-up path at
 * `/` (a run of a CLI that wrongly creates it would leave it behind for every later test on the
 * machine).
 */
function missingPath(...parts: string[]): string {
  return join(home, 'missing', ...parts);
}

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
    [['run', 'hi', '--workspace', 'no-such-ws'], /^the workspace .*\/ws\/no-such-ws is not a folder$/],
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

  it.each([
    // Issue 26 item 17: the words after the prompt are not joined into it.
    [['run', 'fix', 'the', 'test'], 'run', /^unexpected argument "the": the prompt is one argument, so put it in quotes: "fix the test"$/],
    [['run', '--resume', 'abcd', 'and', 'more'], 'run', /^unexpected argument "more": the prompt is one argument/],
    [['loop', 'make', 'it', 'pass'], 'loop', /^unexpected argument "it": the goal is one argument/],
    // A negative number is the option's value, judged by its own check.
    [['run', 'hi', '--workers', '-1'], 'run', /^--workers must be an integer from 0 to 64 \(got "-1"\)$/],
    [['run', 'hi', '--max-turns', '-3'], 'run', /^--max-turns must be a positive integer \(got "-3"\)$/],
    // A bad name is refused (exit 2), so the message does not say it is "ignored".
    [['run', 'hi', '--pass-env', '1BAD'], 'run', /^--pass-env: "1BAD" is not an environment variable name \(letters, digits and _, not starting with a digit\)$/],
    [['batch'], 'batch', /^no batch file given$/],
    [['batch', 'a.txt', 'b.txt'], 'batch', /^unexpected argument "b.txt": keel batch takes one file$/],
    [['batch', 'tasks.txt', '--workers', '0'], 'batch', /^--workers must be from 1 to 64 for keel batch/],
    [['permissions', 'check', '--tool', 'Bash'], 'permissions', /^--input is required/],
    [['mcp', 'add'], 'mcp add', /^needs a server name/],
    [['mcp', 'add', 'x'], 'mcp add', /^needs the server's command: keel mcp add x -- COMMAND/],
    [['mcp', 'add', '--transport', 'ftp', 'x', 'y'], 'mcp add', /^--transport must be stdio, http or sse \(got "ftp"\)$/],
    [['mcp', 'add', '--bogus', 'x'], 'mcp add', /^unknown option --bogus$/],
    [['mcp', 'list', 'extra'], 'mcp list', /^unexpected argument "extra"$/],
    [['mcp', 'list', '--scope', 'user'], 'mcp list', /^unknown option --scope$/],
    [['mcp', 'tools'], 'mcp tools', /^needs a server name$/],
    [['mcp', 'frob'], 'mcp', /^unknown subcommand "frob"$/],
    [['mcp', 'serve', '--mode', 'yolo'], 'mcp serve', /^--mode must be one of/],
  ] as const)('keel %j (issue 26 item 17)', async (args, command, problem) => {
    expectUsageLine(await keel([...args]), command, problem);
  });

  it.each([
    // Issue 21 item 12 and issue 26 item 11: every path a person names must be there. (Relative
    // paths: keel runs in a fresh folder, where they can never exist.)
    [['run', 'hi', '--mcp-config', 'no-such.json'], 'run', /^--mcp-config no-such.json: no such file \(.*\/ws\/no-such.json\)$/],
    [['run', 'hi', '--storage', 'no-such-store'], 'run', /^--storage no-such-store: no such folder; create it first/],
    [['loop', 'go', '--storage', 'no-such-store'], 'loop', /^--storage no-such-store: no such folder/],
    [['tasks', 'list', '--storage', 'no-such-store'], 'tasks', /^--storage no-such-store: no such folder/],
    [['status', '--storage', 'no-such-store'], 'status', /^--storage no-such-store: no such folder/],
    [['events', '--follow', '--storage', 'no-such-store'], 'events', /^--storage no-such-store: no such folder/],
    [['workers', '--storage', 'no-such-store'], 'workers', /^--storage no-such-store: no such folder/],
    [['hooks', 'list', '--storage', 'no-such-store'], 'hooks', /^--storage no-such-store: no such folder/],
    [['hooks', 'approve', '--storage', 'no-such-store'], 'hooks', /^--storage no-such-store: no such folder/],
    [['trust', 'approve', '--storage', 'no-such-store'], 'trust', /^--storage no-such-store: no such folder/],
    [['mcp', 'list', '--storage', 'no-such-store'], 'mcp list', /^--storage no-such-store: no such folder/],
    [['mcp', 'approve', 'x', '--storage', 'no-such-store'], 'mcp approve', /^--storage no-such-store: no such folder/],
    [['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--storage', 'no-such-store'], 'permissions', /^--storage no-such-store: no such folder/],
    [['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--settings', 'no-such/settings.json'], 'permissions', /^--settings no-such\/settings.json: no such file \(.*\/ws\/no-such\/settings.json\)$/],
    [['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--workspace', 'no-such-ws'], 'permissions', /^--workspace no-such-ws: no such folder \(.*\/ws\/no-such-ws\)$/],
    [['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--home', 'no-such-home'], 'permissions', /^--home no-such-home: no such folder/],
    [['mcp', 'list', '--mcp-config', 'no-such.json'], 'mcp list', /^--mcp-config no-such.json: no such file/],
    [['mcp', 'tools', 'x', '--mcp-config', 'no-such.json'], 'mcp tools', /^--mcp-config no-such.json: no such file/],
    [['mcp', 'list', '--workspace', 'no-such-ws'], 'mcp list', /^--workspace no-such-ws: no such folder/],
    [['mcp', 'serve', '--workspace', 'no-such-ws'], 'mcp serve', /^--workspace no-such-ws: no such folder/],
  ] as const)('keel %j: a path that is not there (issue 21 item 12)', async (args, command, problem) => {
    expectUsageLine(await keel([...args]), command, problem);
  });

  it('absolute paths that are not there are usage errors too, and nothing is created at them', async () => {
    const cases: [string[], string, string][] = [
      [['run', 'hi', '--storage', missingPath('store')], 'run', `--storage ${missingPath('store')}: no such folder`],
      [['loop', 'go', '--storage', missingPath('store')], 'loop', `--storage ${missingPath('store')}: no such folder`],
      [['tasks', 'list', '--storage', missingPath('store')], 'tasks', `--storage ${missingPath('store')}: no such folder`],
      [['trust', 'approve', '--storage', missingPath('store')], 'trust', `--storage ${missingPath('store')}: no such folder`],
      [['run', 'hi', '--mcp-config', missingPath('mcp.json')], 'run', `--mcp-config ${missingPath('mcp.json')}: no such file`],
      [['mcp', 'list', '--mcp-config', missingPath('mcp.json')], 'mcp list', `--mcp-config ${missingPath('mcp.json')}: no such file`],
      [['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--settings', missingPath('settings.json')], 'permissions', `--settings ${missingPath('settings.json')}: no such file`],
      [['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--home', missingPath('home')], 'permissions', `--home ${missingPath('home')}: no such folder`],
    ];
    for (const [args, command, problem] of cases) {
      const r = await keel(args);
      expectUsageLine(r, command, new RegExp(`^${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
    expect(existsSync(missingPath())).toBe(false);
  });

  it('keel tasks export --output into a folder that does not exist', async () => {
    const storage = join(home, 'export-store');
    mkdirSync(storage, { recursive: true });
    const run = await keel(['run', 'hi', '--provider', 'demo', '--storage', storage, '--no-memory', '--output-format', 'stream-json']);
    const taskId = String((JSON.parse(run.stdout.trim().split('\n')[0]!) as { taskId: string }).taskId);
    expectUsageLine(await keel(['tasks', 'export', taskId, '--format', 'md', '--output', 'no-such-dir/out.md', '--storage', storage]), 'tasks', /^--output no-such-dir\/out.md: the folder .*\/ws\/no-such-dir does not exist$/);
  });

  it('a missing memory and a missing task: the same exit status (2), one line each', async () => {
    const memory = await keel(['memory', 'show', 'no-such-memory.md']);
    const task = await keel(['tasks', 'show', 'abcd']);
    expect([memory.code, task.code], memory.stderr + task.stderr).toEqual([2, 2]);
    expect(memory.stderr).toMatch(/^keel memory: no memory no-such-memory\.md in .*\n$/);
    expect(task.stderr).toMatch(/^keel tasks: no task "abcd" in .*\n$/);
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

  it.each([
    ['run', /^Usage: keel run "<prompt>"/],
    ['batch', /^Usage: keel batch FILE/],
    ['loop', /^Usage: keel loop/],
    ['tasks', /^Usage:\n {2}keel tasks list/],
    ['memory', /^Usage:\n {2}keel memory list/],
    ['permissions', /^Usage:\n {2}keel permissions check/],
    ['mcp', /^Usage:\n {2}keel mcp list/],
    ['status', /^Usage: keel status/],
    ['events', /^Usage: keel events/],
    ['workers', /^Usage: keel workers/],
    ['hooks', /^Usage: keel hooks/],
    ['trust', /^Usage: keel trust/],
    ['machines', /^Usage: keel machines/],
  ] as const)('keel %s --help prints that command’s own help, not the global one (issue 26 item 17)', async (command, start) => {
    const r = await keel([command, '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(start);
  });
});

describe('keel run --resume of a finished task', () => {
  let server: FakeModelServer;
  const storage = () => join(home, 'resume-store');
  beforeAll(async () => {
    server = await startFakeModelServer();
    // A --storage folder must exist (a typo is bad usage, not a new, empty store).
    mkdirSync(storage(), { recursive: true });
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

describe('keel permissions check --settings (issue 21 item 12: never fails open)', () => {
  it('a relative --settings file is read from the current folder, not from the workspace', async () => {
    const other = join(home, 'other-ws');
    mkdirSync(other, { recursive: true });
    // keel() runs in `workspace`; the rules file is there, the checked workspace is elsewhere.
    writeFileSync(join(workspace, 'deny-rm.json'), JSON.stringify({ permissions: { deny: ['Bash(rm:*)'] } }));
    const r = await keel(['permissions', 'check', '--tool', 'Bash', '--input', '{"command":"rm -rf build"}', '--settings', 'deny-rm.json', '--workspace', other, '--mode', 'bypassPermissions']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ decision: 'deny', rule: 'Bash(rm:*)' });
  });
});
