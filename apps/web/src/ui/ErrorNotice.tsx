/** A server error in the server's words (ApiError's message), never swallowed. */
export function ErrorNotice({ error, prefix }: { error: unknown; prefix?: string }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="notice notice-error" role="alert">
      {prefix ? `${prefix}: ` : ''}
      {message}
    </div>
  );
}
