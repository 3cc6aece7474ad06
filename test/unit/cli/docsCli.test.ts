import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskEventSchema } from '../../../src/shared/protocol/domainSchemas';
import { HELP, RUN_HELP } from '../../../src/cli/help';
import { TASK_OPTIONS } from '../../../src/cli/args';

/**
 * docs/cli.md keeps up with what the CLI prints and takes (issue 26 item 17): every event type a
 * task publishes has a row in the stream-json table, and every command `keel --help` names is in
 * the page's list of commands.
 */
const doc = readFileSync(join(__dirname, '../../../docs/cli.md'), 'utf8');

describe('docs/cli.md', () => {
  it('has a row for every stream-json event type (phase, gatekeeper, memory… included)', () => {
    const types = taskEventSchema.options.map((o) => o.shape.type.value);
    expect(types).toContain('phase');
    const missing = types.filter((t) => !doc.includes(`| \`${t}\` |`));
    expect(missing).toEqual([]);
    // The run's own lines about MCP servers too.
    expect(doc).toContain('| `mcp` |');
  });

  it('names every option of keel run in its usage, and keel run --help explains each (--stall-timeout, --response-timeout included)', () => {
    const options = Object.keys(TASK_OPTIONS).map((o) => `--${o}`);
    expect(options).toEqual(expect.arrayContaining(['--stall-timeout', '--response-timeout']));
    const usage = doc.slice(doc.indexOf('```'), doc.indexOf('```', doc.indexOf('```') + 3));
    expect(options.filter((o) => !usage.includes(`[${o}`))).toEqual([]);
    expect(options.filter((o) => !RUN_HELP.includes(`\n  ${o} `))).toEqual([]);
  });

  it('lists every command of keel --help (events and memory included)', () => {
    const commands = [...new Set([...HELP.matchAll(/^ {2}keel ([a-z]+)/gm)].map((m) => m[1]!))];
    expect(commands).toEqual(expect.arrayContaining(['events', 'memory']));
    const usage = doc.slice(doc.indexOf('```'), doc.indexOf('```', doc.indexOf('```') + 3));
    expect(commands.filter((c) => !usage.includes(`keel ${c}`))).toEqual([]);
  });
});
