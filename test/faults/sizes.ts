// How big each fault scenario runs, in one place. CI (`npm run test:faults`) runs the smallest size
// that still proves a scenario's property; `npm run test:faults -- --full` runs the sizes the
// scenarios were written at, a command beside the benches. Why each CI size is enough:
// docs/faults.md, "Sizes: CI and full"; the scenarios missing here run the same at both sizes.
const FULL = process.argv.includes('--full');

/** Printed on every result line (`size=ci|full`). */
export const sizeName = FULL ? 'full' : 'ci';

const sized = (ci: number, full: number) => (FULL ? full : ci);

export const sizes = {
  /** Scenarios 1 and 10: recipients of the campaign whose worker is killed five times. */
  campaignRecipients: Number(process.env.FAULTS_CAMPAIGN ?? sized(4_000, 20_000)),
  /** Scenario 1': queued transactional emails whose worker is killed five times. */
  burstEmails: Number(process.env.FAULTS_BURST ?? sized(4_000, 20_000)),
  /** Scenario 3: emails sent through SES's throttles and timeouts. */
  sesFaultEmails: sized(1_000, 3_000),
  /** Scenario 14: contacts one burst of events enrolls into the send → wait → send automation. */
  automationContacts: Number(process.env.FAULTS_AUTOMATION ?? sized(1_000, 10_000)),
};
