-- The dashboard's search for a whole address is an exact match on the bare, lower-cased "to"
-- addresses (GIN over the array): a trigram search for a full address reads the posting lists of
-- all its trigrams, most of them common ("com", "ail", "@ex"), about 300 ms on a million emails.

-- AlterTable
ALTER TABLE "Email" ADD COLUMN     "toAddresses" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Existing emails: each stored "to" entry is "addr" or "Name <addr>" (validated when sent), so its
-- bare address is the text between the last angle brackets, or the whole entry. New rows get it
-- from bareAddress() in packages/core/src/emails/create-emails.ts. Rewrites every row once.
UPDATE "Email" SET "toAddresses" = ARRAY(SELECT lower(trim(COALESCE(substring(t FROM '<([^<>]*)>\s*$'), t))) FROM unnest("to") AS t);

-- CreateIndex
CREATE INDEX "Email_toAddresses_idx" ON "Email" USING GIN ("toAddresses");
