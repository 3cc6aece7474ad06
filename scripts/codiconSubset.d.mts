/** The `codicon-<name>` literals of every .ts/.tsx file under `dir` (modifiers included). */
export function usedCodicons(dir: string): string[];
/** Each icon's code point in codicon.css. */
export function codepoints(css: string): Map<string, number>;
/** codicon.css and codicon.ttf cut down to `names`; throws for a name @vscode/codicons does not have. */
export function subsetCodicons(cssText: string, ttf: Buffer, names: string[]): Promise<{ css: string; font: Buffer; icons: string[] }>;
