import { errorText } from '../api/errors';

/** A failure, in the server's own words, with a way to try again. */
export function ErrorNotice({ error, retry, title }: { error: unknown; retry?: () => void; title?: string }) {
  return (
    <div className="error-box" role="alert">
      {title && <strong>{title}: </strong>}
      <span>{errorText(error)}</span>
      {retry && (
        <button type="button" className="secondary small" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}
