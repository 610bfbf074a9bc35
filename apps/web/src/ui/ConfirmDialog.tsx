import { AlertDialog } from 'radix-ui';
import { useState, type ReactNode } from 'react';
import { ErrorNotice } from './ErrorNotice';

/**
 * A destructive action behind a confirmation. The dialog stays open until `onConfirm` settles,
 * and shows the server's error if it fails.
 */
export function ConfirmDialog({
  trigger,
  title,
  description,
  confirmLabel,
  onConfirm,
}: {
  trigger: ReactNode;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
}) {
  const [open, setOpen] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setPending(true);
    setError(null);
    try {
      await onConfirm();
      setOpen(false);
    } catch (err) {
      setError(err);
    } finally {
      setPending(false);
    }
  };
  return (
    <AlertDialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) setError(null);
      }}
    >
      <AlertDialog.Trigger asChild>{trigger}</AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="dialog-overlay" />
        <AlertDialog.Content className="dialog">
          <AlertDialog.Title>{title}</AlertDialog.Title>
          <AlertDialog.Description asChild>
            <div>{description}</div>
          </AlertDialog.Description>
          <ErrorNotice error={error} />
          <div className="dialog-actions">
            <AlertDialog.Cancel asChild>
              <button type="button" className="btn">
                Cancel
              </button>
            </AlertDialog.Cancel>
            <button type="button" className="btn btn-danger" onClick={confirm} disabled={pending}>
              {pending ? 'Working…' : confirmLabel}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
