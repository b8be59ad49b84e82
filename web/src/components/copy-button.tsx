import { useState } from 'react';

/** Copies with the Clipboard API, or (plain http on a closed network has none) through a selected textarea. */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back below */
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** A button that copies `text` and says whether it worked (in a status line screen readers announce). */
export function CopyButton({ text, label = 'Copy', className = 'secondary small' }: { text: string; label?: string; className?: string }) {
  const [result, setResult] = useState<'copied' | 'failed' | null>(null);
  return (
    <span className="row">
      <button type="button" className={className} onClick={() => void copyText(text).then((ok) => setResult(ok ? 'copied' : 'failed'))}>
        {label}
      </button>
      <span role="status" className={result === 'failed' ? 'error small' : 'ok small'}>
        {result === 'copied' ? 'Copied.' : result === 'failed' ? 'Could not copy: select the text and copy it yourself.' : ''}
      </span>
    </span>
  );
}
