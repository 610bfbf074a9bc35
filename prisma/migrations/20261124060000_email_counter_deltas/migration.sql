-- CreateTable
CREATE TABLE "EmailCounterDelta" (
    "id" BIGSERIAL NOT NULL,
    "teamId" INTEGER NOT NULL,
    "domainId" INTEGER NOT NULL,
    "date" TEXT NOT NULL,
    "type" "EmailUsageType" NOT NULL,
    "campaignId" TEXT,
    "bits" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EmailCounterDelta_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "EmailCounterDelta_teamId_idx" ON "EmailCounterDelta"("teamId");

-- CreateIndex
CREATE INDEX "EmailCounterDelta_campaignId_idx" ON "EmailCounterDelta"("campaignId");
