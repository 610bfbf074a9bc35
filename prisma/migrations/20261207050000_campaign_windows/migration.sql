-- CreateTable
CREATE TABLE "CampaignWindow" (
    "campaignId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "size" INTEGER NOT NULL,
    "openedAt" TIMESTAMPTZ(3) NOT NULL,
    "queued" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "CampaignWindow_pkey" PRIMARY KEY ("campaignId","number")
);

-- AddForeignKey
ALTER TABLE "CampaignWindow" ADD CONSTRAINT "CampaignWindow_campaignId_fkey" FOREIGN KEY ("campaignId") REFERENCES "Campaign"("id") ON DELETE CASCADE ON UPDATE CASCADE;
