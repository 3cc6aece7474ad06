import type { AttachedImageInfo } from '../../src/shared/domain/events';
import { megabytes } from '../../src/shared/domain/promptImageLimits';
import type { ComposerImage } from '../images';

/**
 * The images attached to the message being written: a thumbnail each with a remove button
 * (reached with Tab), and what was left out and why (read out as it appears).
 */
export function ComposerImages({ images, problems, onRemove }: { images: readonly ComposerImage[]; problems: readonly string[]; onRemove(id: number): void }) {
  return (
    <>
      {problems.length > 0 && (
        <div class="keel-note keel-image-problems" role="alert" data-testid="image-problems">
          {problems.map((p) => (
            <div key={p}>{p}.</div>
          ))}
        </div>
      )}
      {images.length > 0 && (
        <ul class="keel-chips keel-images" aria-label="Images attached to the message" data-testid="composer-images">
          {images.map((i) => (
            <li key={i.id} class="keel-image" data-testid="composer-image" data-thumbnail={i.thumbnail ? 'true' : 'false'} title={`${i.name} (${megabytes(i.bytes)})`}>
              <img src={i.url} alt={i.name} class="keel-thumb" />
              <button type="button" class="keel-chip-remove keel-image-remove" aria-label={`Remove image ${i.name}`} data-testid="composer-image-remove" onClick={() => onRemove(i.id)}>
                <span class="codicon codicon-close" aria-hidden="true" />
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A sent message's images in the transcript: its preview when it has one, else its name and size. */
export function SentImages({ images }: { images: readonly AttachedImageInfo[] }) {
  return (
    <ul class="keel-chips keel-images" aria-label="Attached images" data-testid="message-images">
      {images.map((i, n) => (
        <li key={`${n}:${i.name}`} class="keel-image" data-testid="message-image" title={`${i.name} (${megabytes(i.bytes)})`}>
          {i.thumbnail ? (
            <img src={i.thumbnail} alt={i.name} class="keel-thumb" />
          ) : (
            <span class="keel-chip">
              <span class="codicon codicon-file-media" aria-hidden="true" />
              <span class="keel-chip-label">{i.name}</span>
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
