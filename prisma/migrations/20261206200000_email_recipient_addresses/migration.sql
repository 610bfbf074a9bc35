-- Every address an email was given (to, cc, bcc and the suppressed ones it was not sent to), bare
-- and lower-cased, for the address page and GET /api/v1/addresses/{address} (docs/deliverability.md):
-- an exact match through a GIN index, as for "toAddresses", which holds only the "to" addresses sent to.
-- No semicolon or apostrophe in a comment here: the Prisma pg adapter splits the script on semicolons.

-- AlterTable
ALTER TABLE "Email" ADD COLUMN     "recipientAddresses" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Existing emails: each stored entry is "addr" or "Name <addr>" (validated when sent), so its bare
-- address is the text between the last angle brackets, or the whole entry (the rule of the
-- toAddresses migration). New rows get it from normaliseAddress() in create-emails.ts. Rewrites every row once.
UPDATE "Email" SET "recipientAddresses" = ARRAY(
  SELECT DISTINCT lower(trim(COALESCE(substring(t FROM '<([^<>]*)>\s*$'), t)))
  FROM unnest("to" || cc || bcc || ARRAY(SELECT s->>'email' FROM jsonb_array_elements(CASE WHEN jsonb_typeof("skippedRecipients") = 'array' THEN "skippedRecipients" ELSE '[]'::jsonb END) AS s WHERE s ? 'email')) AS t
);

-- CreateIndex
CREATE INDEX "Email_recipientAddresses_idx" ON "Email" USING GIN ("recipientAddresses");
