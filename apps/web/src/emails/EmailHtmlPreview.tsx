import { useState } from 'react';

// The email's HTML in a sandboxed frame: no scripts, forms, popups or navigation (sandbox=""),
// and a Content-Security-Policy that blocks every remote load (tracking pixels, fonts, styles)
// until the user asks for them. Inline styles and data: images still show.
const BLOCK_REMOTE = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:";
const ALLOW_REMOTE_IMAGES =
  "default-src 'none'; img-src data: https: http:; style-src 'unsafe-inline' https: http:; font-src data: https: http:";

function framed(html: string, csp: string): string {
  // The policy must come before anything in the email that could load: it goes first.
  return `<meta http-equiv="Content-Security-Policy" content="${csp}"><meta name="referrer" content="no-referrer">${html}`;
}

export function EmailHtmlPreview({ html }: { html: string }) {
  const [remote, setRemote] = useState(false);
  return (
    <div className="html-preview">
      <div className="html-preview-bar">
        {remote ? (
          <span className="muted small">Remote images and styles are loaded.</span>
        ) : (
          <>
            <span className="muted small">Remote images and styles are blocked (they can tell the sender that the email was opened).</span>
            <button type="button" className="btn btn-small" onClick={() => setRemote(true)}>
              Load remote content
            </button>
          </>
        )}
      </div>
      <iframe
        key={String(remote)}
        title="HTML part of the email"
        sandbox=""
        referrerPolicy="no-referrer"
        srcDoc={framed(html, remote ? ALLOW_REMOTE_IMAGES : BLOCK_REMOTE)}
      />
    </div>
  );
}
