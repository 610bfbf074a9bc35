-- Engagement segment conditions (docs/audience.md, "Email activity"): the first open and click of
-- a campaign's recipient, and each team's latest delivery, open and click per recipient address.
-- AlterTable
ALTER TABLE "CampaignEmail" ADD COLUMN     "openedAt" TIMESTAMPTZ(3),
ADD COLUMN     "clickedAt" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "EmailActivity" (
    "teamId" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "lastDeliveredAt" TIMESTAMPTZ(3),
    "lastOpenedAt" TIMESTAMPTZ(3),
    "lastClickedAt" TIMESTAMPTZ(3),

    CONSTRAINT "EmailActivity_pkey" PRIMARY KEY ("teamId","address")
);

-- CreateIndex
CREATE INDEX "CampaignEmail_campaignId_email_idx" ON "CampaignEmail"("campaignId", "email");

-- AddForeignKey
ALTER TABLE "EmailActivity" ADD CONSTRAINT "EmailActivity_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill from the email log still kept: the events recorded before this release count too.
-- Addresses from the "to" recipients, already bare and lower-cased in "toAddresses" (from now on
-- the SES event path also credits cc and bcc). A click is also an open.
INSERT INTO "EmailActivity" ("teamId", "address", "lastDeliveredAt", "lastOpenedAt", "lastClickedAt")
SELECT e."teamId", a.address,
       max(ev."createdAt") FILTER (WHERE ev.status = 'DELIVERED'),
       max(ev."createdAt") FILTER (WHERE ev.status IN ('OPENED', 'CLICKED')),
       max(ev."createdAt") FILTER (WHERE ev.status = 'CLICKED')
  FROM "EmailEvent" ev
  JOIN "Email" e ON e.id = ev."emailId"
  CROSS JOIN LATERAL unnest(e."toAddresses") AS a(address)
 WHERE ev.status IN ('DELIVERED', 'OPENED', 'CLICKED')
 GROUP BY e."teamId", a.address;

UPDATE "CampaignEmail" ce
   SET "openedAt" = x.opened, "clickedAt" = x.clicked
  FROM (SELECT ev."emailId",
               min(ev."createdAt") FILTER (WHERE ev.status IN ('OPENED', 'CLICKED')) AS opened,
               min(ev."createdAt") FILTER (WHERE ev.status = 'CLICKED') AS clicked
          FROM "EmailEvent" ev
         WHERE ev.status IN ('OPENED', 'CLICKED')
         GROUP BY ev."emailId") x
 WHERE ce."emailId" = x."emailId";
