import type { Config } from '@mailrail/platform/config/schema';
import { buildOneClickUnsubscribeUrl, buildUnsubscribeUrl } from '../audience/links';
import { contactVariables, personalizeCampaignBody, type CampaignBody, type CampaignContact } from './campaign-content';

// The one rendering of a campaign email for a contact: the worker sends what this returns, and the
// API's preview and test send show the same thing (personalization and unsubscribe link included).

export interface RenderedCampaignEmail extends CampaignBody {
  /** The RFC 8058 target for List-Unsubscribe. */
  oneClickUnsubscribeUrl: string;
}

/** The campaign and what its contact book tells the renderer. */
export interface CampaignBook {
  id: string;
  /** The book's useSend variables: known names, so a contact without one gets the fallback. */
  bookVariables: string[];
  /** The book's property registry's fallbacks by property name (only those set). */
  propertyFallbacks?: Record<string, string>;
}

/** `body` comes from prepareCampaignBody (once per campaign); this runs once per contact. */
export function renderCampaignEmail(
  config: Pick<Config, 'PUBLIC_URL' | 'SECRET'>,
  body: CampaignBody,
  campaign: CampaignBook,
  contact: CampaignContact,
): RenderedCampaignEmail {
  const unsubscribeUrl = buildUnsubscribeUrl(config, contact.id, campaign.id);
  const vars = contactVariables(contact, campaign.bookVariables, unsubscribeUrl);
  const personal = personalizeCampaignBody(body, vars, campaign.propertyFallbacks);
  return { ...personal, oneClickUnsubscribeUrl: buildOneClickUnsubscribeUrl(config, contact.id, campaign.id) };
}
