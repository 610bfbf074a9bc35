// Defaults a book gets when double opt-in is enabled without its own subject or content.

export const DEFAULT_DOUBLE_OPT_IN_SUBJECT = 'Please confirm your subscription';

/** Matches the confirmation-link placeholder the content must carry (spaces and case are free). */
export const DOUBLE_OPT_IN_URL_PLACEHOLDER = /\{\{\s*doubleOptInUrl\s*\}\}/i;

export const DEFAULT_DOUBLE_OPT_IN_CONTENT = JSON.stringify({
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Confirm your subscription' }] },
    {
      type: 'paragraph',
      content: [{ type: 'text', text: 'Thanks for signing up. Please confirm that {{email}} wants to receive our emails.' }],
    },
    { type: 'button', attrs: { text: 'Confirm subscription', url: '{{doubleOptInUrl}}' } },
    {
      type: 'paragraph',
      content: [{ type: 'text', text: 'If you did not sign up, ignore this email and you will not hear from us again.' }],
    },
  ],
});
