import { useEffect, useRef, useState } from 'react';

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

/**
 * The scale at which a frame `renderWidth` wide fits its container (at most 1), followed as the
 * container resizes: a desktop preview lays the email out at a desktop client's width (its columns
 * side by side, as they are there) and shows it shrunk, not re-flowed to the card's width.
 */
function useFitScale(renderWidth: number | undefined) {
  const box = useRef<HTMLDivElement>(null);
  const [scale, setScale] = useState(1);
  useEffect(() => {
    const el = box.current;
    if (!renderWidth || !el) return;
    const fit = () => setScale(Math.min(1, el.clientWidth / renderWidth));
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(el);
    return () => observer.disconnect();
  }, [renderWidth]);
  return { box, scale };
}

/** `renderWidth`: lay the email out this wide and shrink it to fit (the desktop preview); else the frame takes the card's width. */
export function EmailHtmlPreview({ html, renderWidth }: { html: string; renderWidth?: number }) {
  const [remote, setRemote] = useState(false);
  const { box, scale } = useFitScale(renderWidth);
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
      <div ref={box} className={renderWidth ? 'html-preview-fit' : undefined}>
        <iframe
          key={String(remote)}
          title="HTML part of the email"
          sandbox=""
          referrerPolicy="no-referrer"
          style={renderWidth ? { width: renderWidth, height: `${100 / scale}%`, transform: `scale(${scale})` } : undefined}
          srcDoc={framed(html, remote ? ALLOW_REMOTE_IMAGES : BLOCK_REMOTE)}
        />
      </div>
    </div>
  );
}
