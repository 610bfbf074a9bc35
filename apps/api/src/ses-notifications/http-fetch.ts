/** The one outbound HTTP call of SNS intake (certificates, subscription confirmation): a port so tests never touch the network. */
export type HttpGet = (url: string) => Promise<{ status: number; body: string }>;

const TIMEOUT_MS = 5000;

export const fetchHttpGet: HttpGet = async (url) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
  return { status: res.status, body: await res.text() };
};

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
