import { Toast } from 'radix-ui';
import { createContext, useCallback, useContext, useState, type ReactNode } from 'react';

interface ToastMessage {
  id: number;
  title: string;
  description?: string;
  error?: boolean;
}

const ToastContext = createContext<(t: Omit<ToastMessage, 'id'>) => void>(() => undefined);

/** Short confirmations ("Copied", "Domain deleted"); errors that need reading stay inline instead. */
export function Toaster({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<ToastMessage[]>([]);
  const show = useCallback(
    (t: Omit<ToastMessage, 'id'>) => setToasts((all) => [...all.slice(-2), { ...t, id: Date.now() + Math.random() }]),
    [],
  );
  return (
    <ToastContext.Provider value={show}>
      <Toast.Provider swipeDirection="right" duration={3000}>
        {children}
        {toasts.map((t) => (
          <Toast.Root
            key={t.id}
            className={t.error ? 'toast toast-error' : 'toast'}
            type={t.error ? 'foreground' : 'background'}
            onOpenChange={(open) => !open && setToasts((all) => all.filter((x) => x.id !== t.id))}
          >
            <Toast.Title className="toast-title">{t.title}</Toast.Title>
            {t.description && <Toast.Description>{t.description}</Toast.Description>}
          </Toast.Root>
        ))}
        <Toast.Viewport className="toast-viewport" />
      </Toast.Provider>
    </ToastContext.Provider>
  );
}

export function useToast() {
  return useContext(ToastContext);
}
