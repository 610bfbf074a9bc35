-- Campaign emails that still read source API. 20261206221000_email_source set every campaign
-- email it found to CAMPAIGN, but a worker of the version before it, still running during a
-- rolling upgrade, kept writing campaign emails with the column default API. This finds them.
-- It reads every campaign email once and rewrites only those stragglers, usually none, so it
-- holds no lock that the send path waits on (ROW EXCLUSIVE, and row locks on the stragglers).
-- Running it again changes nothing. docs/email-log.md says why older SMTP and system mail stay API.
-- No semicolon or apostrophe in a comment here: the Prisma pg adapter splits the script on semicolons.
UPDATE "Email" SET "source" = 'CAMPAIGN' WHERE "campaignId" IS NOT NULL AND "source" = 'API';
