/**
 * `${VAR}` and `${VAR:-default}` expansion in MCP server configuration, as Claude Code does it for
 * `.mcp.json`. Pure. A variable that is unset (and has no default) is reported, never silently
 * replaced by nothing; a refused variable (a secret a repository must not read) is reported too.
 */
export interface Expansion {
  value: string;
  /** Variables that were unset and had no default. */
  missing: string[];
  /** Variables the caller refused to expand (e.g. Keel's provider keys in a project file). */
  refused: string[];
}

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands every `${NAME}` / `${NAME:-default}` in `text` from `env`. As in the shell's `:-`, an
 * empty value takes the default; `${NAME}` with an empty value is empty (not missing).
 * `refuse(name)` true → the reference expands to the empty string and is listed in `refused`.
 */
export function expandVars(text: string, env: Readonly<Record<string, string | undefined>>, refuse: (name: string) => boolean = () => false): Expansion {
  const missing: string[] = [];
  const refused: string[] = [];
  const value = text.replace(PATTERN, (_whole, name: string, fallback: string | undefined) => {
    if (refuse(name)) {
      refused.push(name);
      return '';
    }
    const v = env[name];
    if (fallback !== undefined) return v !== undefined && v !== '' ? v : fallback;
    if (v !== undefined) return v;
    missing.push(name);
    return '';
  });
  return { value, missing, refused };
}
