// `npm run package`'s last step: fails when keel.vsix is larger than the limit or does not hold
// what the extension runs (README: "under 1.2 MB"). Reads the zip's central directory itself, so
// it needs no `unzip` on the machine.
import { readFileSync, statSync } from 'node:fs';

/** The limit: 1.2 MB as vsce counts it (1024 × 1024 bytes). */
export const VSIX_LIMIT_BYTES = Math.round(1.2 * 1024 * 1024);
const MUST_HOLD = ['extension/dist/extension.js', 'extension/dist/core.js', 'extension/dist/worker.js', 'extension/dist/webview.js', 'extension/package.json'];
const MUST_NOT_HOLD = [/^extension\/dist\/cli\.js$/, /\.map$/, /^extension\/(src|test|node_modules)\//];

/** The names of the files in a zip archive. */
export function zipEntries(buf) {
  // End of central directory: signature 0x06054b50, at most 64 KiB of comment after it.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const names = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error('damaged central directory');
    const nameLength = buf.readUInt16LE(at + 28);
    const extra = buf.readUInt16LE(at + 30);
    const comment = buf.readUInt16LE(at + 32);
    names.push(buf.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extra + comment;
  }
  return names;
}

/** What is wrong with the package at `path` (an empty list: nothing). */
export function vsixProblems(path) {
  const size = statSync(path).size;
  const names = zipEntries(readFileSync(path));
  const problems = [];
  if (size > VSIX_LIMIT_BYTES) problems.push(`${path} is ${(size / 1048576).toFixed(2)} MB, over the ${(VSIX_LIMIT_BYTES / 1048576).toFixed(1)} MB limit`);
  for (const m of MUST_HOLD) if (!names.includes(m)) problems.push(`${path} lacks ${m}`);
  for (const n of names) if (MUST_NOT_HOLD.some((r) => r.test(n))) problems.push(`${path} holds ${n}, which the extension never runs`);
  return { size, names, problems };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const path = process.argv[2] ?? 'keel.vsix';
  const { size, problems } = vsixProblems(path);
  for (const p of problems) process.stderr.write(`check-vsix: ${p}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write(`check-vsix: ${path} is ${(size / 1048576).toFixed(2)} MB (limit ${(VSIX_LIMIT_BYTES / 1048576).toFixed(1)} MB)\n`);
}
