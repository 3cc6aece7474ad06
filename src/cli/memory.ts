import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { MemoryIndex } from '../core/memory/memoryIndex';
import { MemoryError, MemoryStore, type StoredMemory } from '../core/memory/memoryStore';
import { memoryQuery } from '../core/memory/memoryContext';
import { forTerminal, forTerminalLine } from './terminalText';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

export const MEMORY_HELP = `Usage:
  keel memory list [--json]             the project's memories (.keel/memory/*.md)
  keel memory search "<text>" [--json]  the memories a run with this prompt would use, best first
  keel memory show FILE                 one memory as stored
  keel memory delete FILE               delete one memory
Options: --workspace DIR (default: current directory). FILE is a name in .keel/memory/ (e.g.
unit-tests-run-with-vitest.md). Memories are plain Markdown files: edit them in any editor.
`;

const WORKSPACE = { workspace: { type: 'string' } } as const;

/**
 * `keel memory list|search|show|delete`: the project memory of a workspace (docs/memory.md).
 * Exit codes, as `keel tasks`: 0 success, 1 a memory that cannot be read or deleted, 2 bad usage
 * (one line on stderr) or a name that names no memory.
 */
export function memoryCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(MEMORY_HELP);
    return sub === undefined ? 2 : 0;
  }
  try {
    switch (sub) {
      case 'list': {
        const { values } = parseCommandLine(rest, { ...WORKSPACE, json: { type: 'boolean' } }, false);
        const store = storeAt(values.workspace);
        const all = store.list();
        if (values.json) process.stdout.write(`${JSON.stringify(all.map(entry))}\n`);
        else if (all.length === 0) process.stdout.write(`No memories in ${store.dir}\n`);
        // A repository's files: their text is shown, never sent to the terminal as escape sequences.
        else for (const m of all) process.stdout.write(`${m.file}  ${forTerminalLine(m.title)}${m.tags.length ? `  [${forTerminalLine(m.tags.join(', '))}]` : ''}\n`);
        return 0;
      }
      case 'search': {
        const { values, positionals } = parseCommandLine(rest, { ...WORKSPACE, json: { type: 'boolean' } }, true);
        const query = positionals.join(' ').trim();
        if (!query) throw new UsageError('search needs the text to search for');
        const hits = new MemoryIndex(storeAt(values.workspace)).search(memoryQuery(query));
        if (values.json) process.stdout.write(`${JSON.stringify(hits.map((h) => ({ ...entry(h.memory), score: Math.round(h.score * 100) / 100 })))}\n`);
        else if (hits.length === 0) process.stdout.write('No memory matches.\n');
        else for (const h of hits) process.stdout.write(`${h.score.toFixed(1).padStart(6)}  ${h.memory.file}  ${forTerminalLine(h.memory.title)}\n`);
        return 0;
      }
      case 'show':
      case 'delete': {
        const { values, positionals } = parseCommandLine(rest, WORKSPACE, true);
        if (positionals.length !== 1) throw new UsageError(`${sub} needs exactly one memory file name`);
        const store = storeAt(values.workspace);
        const file = positionals[0]!;
        if (sub === 'delete') {
          store.delete(file);
          process.stdout.write(`Deleted ${file}\n`);
          return 0;
        }
        const m = store.tryRead(file);
        if (!m) throw new MemoryError('not_found', `no memory ${file} in ${store.dir}`);
        const about = `${m.created ? `created ${m.created}` : ''}${m.source ? ` · from task ${m.source}` : ''}${m.tags.length ? ` · tags: ${m.tags.join(', ')}` : ''}`;
        process.stdout.write(`# ${forTerminalLine(m.title)}\n${forTerminalLine(about)}\n\n${forTerminal(m.body)}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand "${sub}"`);
    }
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(MEMORY_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('memory', err);
    if (err instanceof MemoryError) {
      if (err.code === 'invalid_name') return reportUsage('memory', new UsageError(err.message));
      process.stderr.write(`keel memory: ${err.message}\n`);
      return err.code === 'not_found' ? 2 : 1;
    }
    throw err;
  }
}

function storeAt(workspace: string | undefined): MemoryStore {
  const dir = resolve(workspace ?? process.cwd());
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`the workspace ${dir} is not a folder`);
  return new MemoryStore(dir, (_level, message) => process.stderr.write(`keel memory: ${forTerminal(message)}\n`));
}

function entry(m: StoredMemory) {
  return { file: m.file, title: m.title, created: m.created, ...(m.source ? { source: m.source } : {}), tags: m.tags, body: m.body };
}
