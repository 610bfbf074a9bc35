import { detectMimeType } from 'nodemailer/lib/mime-funcs/mime-types';

/** What the email page lists of an attachment: never its content. */
export interface AttachmentSummary {
  filename: string;
  /** As the message carries it: the MIME type nodemailer gives the file's name when it sends. */
  contentType: string;
  /** Bytes of the file (decoded), not of its base64. */
  size: number;
}

/** Bytes a base64 text decodes to: its alphabet characters x 3/4 (padding and line breaks left out). */
function base64DecodedBytes(base64: string): number {
  // Line breaks are rare (the API accepts them): without one, the length and the padding suffice.
  const compact = base64.includes('\n') || base64.includes('\r') ? base64.replace(/[\r\n]/g, '') : base64;
  let chars = compact.length;
  while (chars > 0 && compact[chars - 1] === '=') chars--;
  return Math.floor((chars * 3) / 4);
}

/** The list stored with an email sent through the API: name, the type it is sent as, size. */
export function summariseBase64Attachments(attachments: { filename: string; content: string }[]): AttachmentSummary[] {
  return attachments.map((a) => ({ filename: a.filename, contentType: detectMimeType(a.filename), size: base64DecodedBytes(a.content) }));
}
