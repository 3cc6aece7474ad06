/**
 * The `/command` being typed at the very start of the message (where `/mcp__server__prompt` must
 * be), if the caret is still in it: its query (the text after `/`). Pure.
 */
export function activeSlash(text: string, caret: number): { query: string } | undefined {
  const m = /^\/(\S*)$/.exec(text.slice(0, caret));
  return m ? { query: m[1] ?? '' } : undefined;
}

/** `text` with the command being typed (start to `caret`) replaced by `/name `; returns the new caret too. */
export function insertSlash(text: string, caret: number, name: string): { text: string; caret: number } {
  const inserted = `/${name} `;
  const rest = text.slice(caret).replace(/^\S*/, '').replace(/^ /, '');
  return { text: inserted + rest, caret: inserted.length };
}

/** How a command's arguments read in the list: `city`, `[unit]` for an optional one. */
export function argumentHint(args: readonly { name: string; required: boolean }[]): string {
  return args.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
}
