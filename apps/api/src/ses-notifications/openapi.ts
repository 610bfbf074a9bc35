import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';

export function documentSesNotificationRoutes(r: DocRegistry) {
  const tag = 'SES events';
  documentRoute(r, {
    method: 'post',
    path: '/api/ses/notifications',
    tag,
    public: true,
    errors: [400, 403, 503],
    summary:
      'Amazon SNS endpoint for SES events (signed SNS messages from topics mailrail owns; their SubscriptionConfirmation is confirmed automatically)',
    description:
      'SNS posts with Content-Type text/plain; the body is the SNS message JSON. Posts from unknown topics, with a Timestamp outside the accepted window, forged or malformed are refused and write nothing.',
    response: z.object({ data: z.string() }),
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/ses/notifications',
    tag,
    public: true,
    errors: [],
    summary: 'Reachability check for operators',
    response: z.object({ data: z.string() }),
  });
}
