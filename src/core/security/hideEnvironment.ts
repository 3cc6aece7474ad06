import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { isKeyVariable } from './toolEnvironment';
import { MIN_KNOWN_SECRET_LENGTH } from './secrets';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Takes Keel's provider keys out of what other processes can read of this one's environment.
 *
 * Why: on Linux, `/proc/<pid>/environ` shows the environment a process was *started* with — the
 * block the kernel copied at exec — to every process of the same user, whatever the process did
 * to its environment since (`delete process.env.X` only drops a pointer to it). A command the
 * model runs is such a process: `rev /proc/$PPID/environ` read the key of a CLI started with
 * `ANTHROPIC_API_KEY=…` (and, reversed, passed the redactor). Node 20 cannot exec itself again
 * without the keys (`process.execve` came in Node 23), and a parent that stayed behind to re-run
 * Keel would keep the block itself; so this process overwrites its own block instead
 * (`/proc/self/mem`, which a process may always write): every entry that names a key
 * (`isKeyVariable`: ANTHROPIC_API_KEY, OPENAI_API_KEY, `KEEL_*KEY*`, …) or holds one of their
 * values is zeroed. The variables stay in `process.env` (moved to the C library's heap first), so
 * the host reads them as before; only the exec-time copy is gone.
 *
 * Contract: call it first, before anything starts other processes or reads the keys. Never throws;
 * says what it hid, or why it could not (not Linux: nothing to do there — macOS shows a process's
 * environment only to itself and root; a kernel that refuses the write).
 */
export interface HiddenEnvironment {
  /** The names whose exec-time entries were overwritten. */
  hidden: string[];
  /** Why nothing could be hidden (null when it worked, or when there was nothing to hide). */
  problem: string | null;
}

export function hideKeysFromProcEnviron(env: NodeJS.ProcessEnv = process.env): HiddenEnvironment {
  if (process.platform !== 'linux') return { hidden: [], problem: null };
  const keyNames = Object.keys(env).filter((n) => isKeyVariable(n) && (env[n] ?? '').trim().length > 0);
  if (keyNames.length === 0) return { hidden: [], problem: null };
  const values = keyNames.map((n) => env[n]!.trim()).filter((v) => v.length >= MIN_KNOWN_SECRET_LENGTH);
  let fd: number | null = null;
  try {
    const { start, end } = environBlock();
    fd = openSync('/proc/self/mem', 'r+');
    const block = Buffer.alloc(end - start);
    readSync(fd, block, 0, block.length, start);
    const entries = entriesOf(block).filter((e) => {
      const eq = e.text.indexOf('=');
      if (eq <= 0) return false;
      const name = e.text.slice(0, eq);
      const value = e.text.slice(eq + 1);
      return keyNames.includes(name) || values.some((v) => value.includes(v));
    });
    const hidden: string[] = [];
    for (const e of entries) {
      const name = e.text.slice(0, e.text.indexOf('='));
      // The C library's `environ` may point into the block: drop the pointer first, then put the
      // variable back (a copy on the heap), so `process.env` never reads a zeroed entry.
      const current = process.env[name];
      delete process.env[name];
      writeSync(fd, Buffer.alloc(e.length), 0, e.length, start + e.offset);
      if (current !== undefined) process.env[name] = current;
      hidden.push(name);
    }
    return { hidden, problem: null };
  } catch (err) {
    return { hidden: [], problem: errorMessage(err) };
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Where this process's exec-time environment lies in its memory (proc(5), /proc/PID/stat fields 50 and 51). */
function environBlock(): { start: number; end: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (in parentheses, which may hold spaces) start with field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) throw new Error('this kernel does not say where the environment lies (/proc/self/stat)');
  return { start, end };
}

/** The NUL-separated entries of the block, with their byte offsets and lengths. */
function entriesOf(block: Buffer): { offset: number; length: number; text: string }[] {
  const out: { offset: number; length: number; text: string }[] = [];
  let offset = 0;
  while (offset < block.length) {
    let nul = block.indexOf(0, offset);
    if (nul === -1) nul = block.length;
    if (nul > offset) out.push({ offset, length: nul - offset, text: block.toString('utf8', offset, nul) });
    offset = nul + 1;
  }
  return out;
}
