import { useState } from 'react';
import { useToast } from './toast';

async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  // Plain http on a LAN address is not a secure context: the older copy command still works there.
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('copy refused');
  } finally {
    area.remove();
  }
}

/** One click copies `value`; `label` names what is copied for screen readers ("Copy DKIM value"). */
export function CopyButton({ value, label, text = 'Copy' }: { value: string; label: string; text?: string }) {
  const toast = useToast();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await writeClipboard(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
      toast({ title: 'Copied to the clipboard' });
    } catch {
      toast({ title: 'Copying failed', description: 'Select the text and copy it by hand.', error: true });
    }
  };
  return (
    <button type="button" className="btn btn-small" onClick={copy} aria-label={label}>
      {copied ? 'Copied' : text}
    </button>
  );
}
