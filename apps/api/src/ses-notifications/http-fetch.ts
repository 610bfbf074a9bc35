/** The one outbound HTTP call of SNS intake (certificates, subscription confirmation): a port so tests never touch the network. */
export type HttpGet = (url: string) => Promise<{ status: number; body: string }>;

const TIMEOUT_MS = 5000;
// A signing certificate is about 2 KB and a ConfirmSubscription answer less: anything much larger is not SNS.
export const MAX_BODY_BYTES = 64 * 1024;

export const fetchHttpGet: HttpGet = async (url) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
  return { status: res.status, body: await readCapped(res, MAX_BODY_BYTES) };
};

/** The body as text, or an error as soon as it passes `maxBytes` (the rest is not downloaded). */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`response larger than ${maxBytes} bytes`);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Amazon SNS endpoints: `sns.<region>.amazonaws.com` (and the China partition's `.com.cn`). */
export function isSnsHttpsUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.port === '' && /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(url.hostname);
}
