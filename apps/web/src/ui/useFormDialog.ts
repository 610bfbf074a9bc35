import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useToast } from './toast';

/**
 * The wiring every create/edit dialog repeats around FormDialog: open state, a mutation whose
 * error the form shows, on success a toast, the cache keys to refetch and (unless the dialog has a
 * result to show, like a key shown once) closing; closing resets the mutation and the form.
 */
export function useFormDialog<TData, TVars = void>(opts: {
  mutationFn: (vars: TVars) => Promise<TData>;
  /** Query keys (prefixes) refetched after success. */
  invalidate?: unknown[][];
  /** A toast title after success. */
  toast?: (data: TData) => string;
  /** Keep the dialog open after success (it shows `mutation.data`, e.g. a secret shown once). */
  keepOpen?: boolean;
  /** Clears the form's own state; called when the dialog closes. */
  reset?: () => void;
  onSuccess?: (data: TData) => void | Promise<void>;
}) {
  const qc = useQueryClient();
  const showToast = useToast();
  const [open, setOpen] = useState(false);
  const onOpenChange = (o: boolean) => {
    setOpen(o);
    if (!o) {
      mutation.reset();
      opts.reset?.();
    }
  };
  const mutation = useMutation({
    mutationFn: opts.mutationFn,
    onSuccess: async (data) => {
      if (opts.toast) showToast({ title: opts.toast(data) });
      if (!opts.keepOpen) onOpenChange(false);
      await opts.onSuccess?.(data);
      await Promise.all((opts.invalidate ?? []).map((queryKey) => qc.invalidateQueries({ queryKey })));
    },
  });
  /** A form's onSubmit: no page reload, runs the mutation with `vars`. */
  const submit = (vars: TVars) => (e: FormEvent) => {
    e.preventDefault();
    mutation.mutate(vars);
  };
  return { mutation, submit, close: () => onOpenChange(false), dialog: { open, onOpenChange } };
}
