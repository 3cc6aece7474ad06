import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../../src/cli/args';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from '../../../src/cli/usage';

const OPTIONS = { model: { type: 'string' }, json: { type: 'boolean' }, settings: { type: 'string', multiple: true } } as const;
const problem = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('no usage error');
};

describe('parseCommandLine: command lines people get wrong', () => {
  it('parses good input like parseArgs', () => {
    const r = parseCommandLine(['a', '--model', 'm', '--json', '--settings', 'x', '--settings=y', '--', '--not-an-option'], OPTIONS, true);
    expect(r.values).toEqual({ model: 'm', json: true, settings: ['x', 'y'] });
    expect(r.positionals).toEqual(['a', '--not-an-option']);
  });

  it('names the problem in words, without Node’s wording', () => {
    expect(problem(() => parseCommandLine(['--foo'], OPTIONS, true))).toBe('unknown option --foo');
    expect(problem(() => parseCommandLine(['-q'], OPTIONS, true))).toBe('unknown option -q');
    expect(problem(() => parseCommandLine(['--model'], OPTIONS, true))).toBe('--model needs a value');
    expect(problem(() => parseCommandLine(['--model', '--json'], OPTIONS, true))).toBe('--model needs a value');
    expect(problem(() => parseCommandLine(['--json=no'], OPTIONS, true))).toBe('--json takes no value');
    expect(problem(() => parseCommandLine(['--model', 'a', '--model=b'], OPTIONS, true))).toBe('--model is given more than once');
    expect(problem(() => parseCommandLine(['stray'], OPTIONS, false))).toBe('unexpected argument "stray"');
  });

  it('a value that starts with a dash can be given inline', () => {
    expect(parseCommandLine(['--model=-x'], OPTIONS, false).values.model).toBe('-x');
  });

  it('--help or -h wins over any other problem', () => {
    expect(() => parseCommandLine(['--foo', '--help'], OPTIONS, false)).toThrow(HelpRequested);
    expect(() => parseCommandLine(['stray', '-h'], OPTIONS, false)).toThrow(HelpRequested);
  });

  it('prints one line with the command prefix once, and returns 2', () => {
    let out = '';
    expect(reportUsage('run', new UsageError('unknown option --foo'), (s) => (out += s))).toBe(2);
    expect(out).toBe('keel run: unknown option --foo (see keel run --help)\n');
  });

  it('keel run’s own checks say what is wrong without repeating "keel run"', () => {
    expect(problem(() => parseRunArgs([], {}))).toBe('no prompt given');
    expect(problem(() => parseRunArgs(['hi', '--base-url', 'ftp://x'], {}))).toMatch(/^--base-url must be an http/);
    expect(parseRunArgs(['hi', '--base-url', 'http://127.0.0.1:11434/v1'], {}).provider.baseUrl).toBe('http://127.0.0.1:11434/v1');
  });
});
