import type { ReactNode } from 'react';

/** The frame of the signed-out pages (sign in, links, invitations). */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">
          mailrail
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
