import { exportJson, exportMarkdown } from '../../core/store/exportTask';
import type { LoadedTask } from '../../core/store/taskStore';
import type { TaskSummary as StoredSummary } from '../../core/store/types';
import type { ExportFormat } from '../../shared/protocol/chatMessages';

/** A file name for an exported task: `keel-<title words>-<id prefix>.<md|json>`, safe on every OS. */
export function exportFileName(title: string, id: string, format: ExportFormat): string {
  const words = title
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `keel-${words ? `${words}-` : ''}${id.slice(0, 8)}.${format === 'markdown' ? 'md' : 'json'}`;
}

/** The exported text of a task (the core's Markdown or JSON export). */
export function exportContent(task: LoadedTask, format: ExportFormat, summary?: StoredSummary): string {
  return format === 'markdown' ? exportMarkdown(task, summary) : exportJson(task, summary);
}
