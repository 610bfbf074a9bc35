-- Where each email came from (API, SMTP, CAMPAIGN, SYSTEM), for the email log filter, the
-- indexes the log walks newest first for a source or a campaign (docs/dashboard.md), and each
-- email's attachment list (name, type, size), kept when the contents are cleared.
-- No semicolon or apostrophe in a comment here: the Prisma pg adapter splits the script on semicolons.

-- CreateEnum
CREATE TYPE "EmailSource" AS ENUM ('API', 'SMTP', 'CAMPAIGN', 'SYSTEM');

-- AlterTable: a constant default is stored in the catalog, no row is rewritten.
ALTER TABLE "Email" ADD COLUMN     "source" "EmailSource" NOT NULL DEFAULT 'API',
ADD COLUMN     "attachmentList" JSONB;

-- Existing emails keep no attachment list: only unsent ones still hold the contents it would be
-- read from, and the email page shows none rather than a partial one.

-- Existing campaign emails, found through the campaignId index before it is replaced. Emails
-- sent through the SMTP relay or by the service itself before this column stay API: nothing
-- stored tells them apart.
UPDATE "Email" SET "source" = 'CAMPAIGN' WHERE "campaignId" IS NOT NULL;

-- DropIndex: the new campaign index starts with campaignId, so it serves every query the old one did.
DROP INDEX "Email_campaignId_idx";

-- CreateIndex
CREATE INDEX "Email_teamId_source_createdAt_id_idx" ON "Email"("teamId", "source", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Email_campaignId_createdAt_id_idx" ON "Email"("campaignId", "createdAt" DESC, "id" DESC);
