import type { Config } from '@mailrail/platform/config/schema';
import { buildOneClickUnsubscribeUrl, buildUnsubscribeUrl } from '../audience/links';
import { contactVariables, personalizeCampaignBody, type CampaignBody, type CampaignContact } from './campaign-content';

// The one rendering of a campaign email for a contact: the worker sends what this returns, and the
// API's preview and test send show the same thing (personalization and unsubscribe link included).

export interface RenderedCampaignEmail extends CampaignBody {
  /** The RFC 8058 target for List-Unsubscribe. */
  oneClickUnsubscribeUrl: string;
}

/** `body` comes from prepareCampaignBody (once per campaign); this runs once per contact. */
export function renderCampaignEmail(
  config: Pick<Config, 'PUBLIC_URL' | 'SECRET'>,
  body: CampaignBody,
  campaign: { id: string; bookVariables: string[] },
  contact: CampaignContact,
): RenderedCampaignEmail {
  const unsubscribeUrl = buildUnsubscribeUrl(config, contact.id, campaign.id);
  const personal = personalizeCampaignBody(body, contactVariables(contact, campaign.bookVariables, unsubscribeUrl));
  return { ...personal, oneClickUnsubscribeUrl: buildOneClickUnsubscribeUrl(config, contact.id, campaign.id) };
}
