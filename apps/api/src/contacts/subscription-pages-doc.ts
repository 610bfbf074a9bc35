import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';

// The pages a contact reaches from a link in an email (subscription-pages.ts): HTML, outside the
// API key, documented here beside the API's declared routes.
const html = z.string().describe('An HTML page');
const link = { description: 'Signed link parameters as sent in the email' };

export function documentSubscriptionPageRoutes(r: DocRegistry) {
  const pages = 'Subscription pages';
  documentRoute(r, {
    method: 'get',
    path: '/subscribe/confirm',
    tag: pages,
    summary: 'Double opt-in page with a confirm button (changes nothing)',
    description: link.description,
    public: true,
    contentType: 'text/html',
    response: html,
    errors: [400, 404, 409, 410],
  });
  documentRoute(r, {
    method: 'post',
    path: '/subscribe/confirm',
    tag: pages,
    summary: 'Confirm a pending subscription (the page’s button)',
    description: link.description,
    public: true,
    contentType: 'text/html',
    response: html,
    errors: [400, 404, 409, 410],
  });
  documentRoute(r, {
    method: 'get',
    path: '/unsubscribe',
    tag: pages,
    summary: 'Unsubscribe page with a button (changes nothing)',
    description: link.description,
    public: true,
    contentType: 'text/html',
    response: html,
    errors: [400, 404],
  });
  documentRoute(r, {
    method: 'post',
    path: '/unsubscribe',
    tag: pages,
    summary: 'Unsubscribe (the page’s button)',
    description: link.description,
    public: true,
    contentType: 'text/html',
    response: html,
    errors: [400, 404],
  });
  documentRoute(r, {
    method: 'post',
    path: '/unsubscribe/one-click',
    tag: pages,
    summary: 'RFC 8058 one-click unsubscribe (List-Unsubscribe-Post)',
    description: link.description,
    public: true,
    response: z.object({ success: z.literal(true), message: z.string() }),
    errors: [400, 404],
  });
}
