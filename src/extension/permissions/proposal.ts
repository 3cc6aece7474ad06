/**
 * Naming of the diff-editor prompt's documents, free of 'vscode' so it can be tested. A proposed
 * document's URI query is `request=<id>`: the Accept / Reject commands find the request by it.
 */

/** The request id in a proposed document's query, or undefined when it has none. */
export function requestIdOfQuery(query: string): string | undefined {
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq) === 'request') {
      try {
        const id = decodeURIComponent(part.slice(eq + 1));
        return id.length > 0 ? id : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The diff editor's title: the file name and that Keel waits for an answer. */
export function proposedTitle(path: string, isNew: boolean): string {
  const name = path.split(/[\\/]/).pop() || path;
  return `${name} (proposed by Keel${isNew ? ', new file' : ''}) — Accept or Reject`;
}
