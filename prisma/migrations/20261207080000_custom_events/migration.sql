-- CreateTable
CREATE TABLE "Event" (
    "id" TEXT NOT NULL,
    "teamId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "contactId" TEXT NOT NULL,
    "contactBookId" TEXT NOT NULL,
    "properties" JSONB NOT NULL DEFAULT '{}',
    "externalId" TEXT,
    "source" TEXT NOT NULL,
    "occurredAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EventKey" (
    "teamId" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "bodyHash" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "EventKey_pkey" PRIMARY KEY ("teamId","key")
);

-- CreateIndex
CREATE INDEX "Event_teamId_occurredAt_id_idx" ON "Event"("teamId", "occurredAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Event_teamId_name_occurredAt_id_idx" ON "Event"("teamId", "name", "occurredAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Event_teamId_contactId_occurredAt_id_idx" ON "Event"("teamId", "contactId", "occurredAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "EventKey_createdAt_idx" ON "EventKey"("createdAt");
