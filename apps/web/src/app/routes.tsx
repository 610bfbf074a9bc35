import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { AcceptInvitationPage } from '../session/AcceptInvitationPage';
import { ForgotPasswordPage } from '../session/ForgotPasswordPage';
import { ResetPasswordPage } from '../session/ResetPasswordPage';
import { SignInLinkPage } from '../session/SignInLinkPage';
import { SignInPage } from '../session/SignInPage';
import { FirstTeamRedirect, RequireSession } from './RequireSession';
import { RouteError } from './RouteError';
import { TeamLayout } from './TeamLayout';

// Every page of a team is its own chunk, loaded when first opened (react-router's route `lazy`):
// the first load carries the shell, the data layer and the sign-in page only (budget: 300 KB gzip).
const page = (load: () => Promise<{ default: React.ComponentType }>): Pick<RouteObject, 'lazy'> => ({
  lazy: async () => ({ Component: (await load()).default }),
});

const teamPages: RouteObject[] = [
  { index: true, ...page(() => import('../overview/OverviewPage')) },
  { path: 'emails', ...page(() => import('../emails/EmailsPage')) },
  { path: 'emails/:emailId', ...page(() => import('../emails/EmailPage')) },
  { path: 'request-log', ...page(() => import('../request-log/RequestLogPage')) },
  { path: 'events', ...page(() => import('../events/EventsPage')) },
  { path: 'events/:eventId', ...page(() => import('../events/EventPage')) },
  { path: 'automations', ...page(() => import('../automations/AutomationsPage')) },
  { path: 'automations/:automationId', ...page(() => import('../automations/AutomationPage')) },
  { path: 'automations/:automationId/runs/:runId', ...page(() => import('../automations/RunPage')) },
  { path: 'contact-books', ...page(() => import('../contact-books/ContactBooksPage')) },
  { path: 'contact-books/:bookId', ...page(() => import('../contact-books/ContactBookPage')) },
  { path: 'campaigns', ...page(() => import('../campaigns/CampaignsPage')) },
  { path: 'campaigns/:campaignId', ...page(() => import('../campaigns/CampaignPage')) },
  { path: 'templates', ...page(() => import('../templates/TemplatesPage')) },
  { path: 'templates/:templateId', ...page(() => import('../templates/TemplatePage')) },
  { path: 'analytics', ...page(() => import('../analytics/AnalyticsPage')) },
  { path: 'domains', ...page(() => import('../domains/DomainsPage')) },
  { path: 'domains/:domainId', ...page(() => import('../domains/DomainPage')) },
  { path: 'api-keys', ...page(() => import('../api-keys/ApiKeysPage')) },
  { path: 'suppressions', ...page(() => import('../suppressions/SuppressionsPage')) },
  { path: 'addresses', ...page(() => import('../deliverability/AddressPage')) },
  { path: 'webhooks', ...page(() => import('../webhooks/WebhooksPage')) },
  { path: 'webhooks/:webhookId', ...page(() => import('../webhooks/WebhookPage')) },
  { path: 'smtp', ...page(() => import('../smtp/SmtpPage')) },
  { path: 'settings', ...page(() => import('../settings/SettingsPage')) },
  { path: 'account', ...page(() => import('../settings/AccountPage')) },
  { path: '*', ...page(() => import('./NotFoundPage')) },
];

export const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  { path: '/sign-in/link', element: <SignInLinkPage /> },
  { path: '/forgot-password', element: <ForgotPasswordPage /> },
  { path: '/reset-password', element: <ResetPasswordPage /> },
  { path: '/invitations/accept', element: <AcceptInvitationPage /> },
  {
    element: <RequireSession />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <FirstTeamRedirect /> },
      { path: 'account', element: <FirstTeamRedirect to="account" /> },
      { path: 'teams/:teamId', element: <TeamLayout />, errorElement: <RouteError />, children: teamPages },
      { path: '*', element: <Navigate to="/" replace /> },
    ],
  },
]);
