import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { publicOnlyLookup, refusedAddressReason, WebhookTargetRefusedError, type ResolveHost } from '@mailrail/domain/webhooks/ssrf';

export interface PostResult {
  status: number;
  /** The start of the response body, for the delivery log. */
  text: string;
}

const KEEP_RESPONSE_CHARS = 1000;

/**
 * POSTs one webhook body. An address literal must pass the SSRF policy (ssrf.ts) and a host name
 * is resolved by a lookup that applies the same policy to every answer, so the socket connects
 * only to an address that passed the check (no DNS-rebinding window). With `allowPrivate`,
 * metadata and link-local addresses stay refused. Redirects are not followed.
 * The timeout covers the whole exchange, connection to last byte read.
 */
export function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowPrivate: boolean; resolveHost?: ResolveHost },
): Promise<PostResult> {
  const url = new URL(rawUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const policy = { allowPrivate: opts.allowPrivate };
  const refused = isIP(host) ? refusedAddressReason(host, policy) : null;
  if (refused) return Promise.reject(new WebhookTargetRefusedError(refused));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(opts.timeoutMs),
        lookup: publicOnlyLookup(opts.resolveHost, policy),
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        const done = () => resolve({ status: res.statusCode ?? 0, text: text.slice(0, KEEP_RESPONSE_CHARS) });
        res.on('data', (chunk: string) => {
          text += chunk;
          // Enough for the log: stop reading a large (or endless) answer.
          if (text.length >= KEEP_RESPONSE_CHARS) {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
