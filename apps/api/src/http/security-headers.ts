import type { ServerResponse } from 'node:http';

// Browser-facing hardening headers. Every answer of the API process (JSON, the dashboard, the
// docs, the subscription pages) gets the base set; the dashboard's pages also get DASHBOARD_CSP.

/** On every response: no MIME sniffing, no Referer leaving with a token in the URL, no framing by any site. */
export function setBaseSecurityHeaders(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
}

/**
 * The dashboard app's policy: its own scripts only (Vite's build has no inline script), API calls
 * to its own origin, nothing may frame it. Images, styles and fonts may also be remote and inline
 * because the email preview (a sandboxed srcdoc frame, EmailHtmlPreview.tsx) inherits this policy;
 * the frame's own policy blocks remote content until the user asks for it.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline' https: http:",
  "img-src 'self' data: https: http:",
  "font-src 'self' data: https: http:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
