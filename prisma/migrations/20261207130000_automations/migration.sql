-- CreateEnum
CREATE TYPE "AutomationStatus" AS ENUM ('DRAFT', 'ACTIVE', 'PAUSED');

-- CreateEnum
CREATE TYPE "AutomationRunStatus" AS ENUM ('ACTIVE', 'COMPLETED', 'EXITED', 'FAILED');

-- AlterEnum
ALTER TYPE "EmailSource" ADD VALUE 'AUTOMATION';

-- AlterTable: the column first, then its default, so existing rows keep NULL (never enrolled) and
-- the table is not rewritten (a volatile default in ADD COLUMN would rewrite every row).
ALTER TABLE "Contact" ADD COLUMN     "txid" BIGINT;
ALTER TABLE "Contact" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id())::text::bigint;

-- Event.txid and its index come from the event feed migration (20261207110000_event_feed).

-- CreateTable
CREATE TABLE "Automation" (
    "id" TEXT NOT NULL,
    "teamId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "status" "AutomationStatus" NOT NULL DEFAULT 'DRAFT',
    "currentVersion" INTEGER NOT NULL DEFAULT 1,
    "enrollFromTxid" BIGINT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Automation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AutomationVersion" (
    "automationId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AutomationVersion_pkey" PRIMARY KEY ("automationId","version")
);

-- CreateTable
CREATE TABLE "AutomationRun" (
    "id" TEXT NOT NULL,
    "teamId" INTEGER NOT NULL,
    "automationId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "contactId" TEXT NOT NULL,
    "entryKey" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "context" JSONB NOT NULL DEFAULT '{}',
    "status" "AutomationRunStatus" NOT NULL DEFAULT 'ACTIVE',
    "stepId" TEXT,
    "dueAt" TIMESTAMPTZ(3),
    "waitEvent" TEXT,
    "waitSince" TIMESTAMPTZ(3),
    "stepCount" INTEGER NOT NULL DEFAULT 0,
    "exitReason" TEXT,
    "enteredAt" TIMESTAMPTZ(3) NOT NULL,
    "finishedAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AutomationRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AutomationRunLog" (
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "stepId" TEXT NOT NULL,
    "stepType" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "detail" TEXT NOT NULL,
    "nextStepId" TEXT,
    "emailId" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AutomationRunLog_pkey" PRIMARY KEY ("runId","seq")
);

-- CreateTable
CREATE TABLE "AutomationCursor" (
    "teamId" INTEGER NOT NULL,
    "source" TEXT NOT NULL,
    "txid" BIGINT NOT NULL,
    "lastId" TEXT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AutomationCursor_pkey" PRIMARY KEY ("teamId","source")
);

-- CreateIndex
CREATE INDEX "Automation_teamId_createdAt_idx" ON "Automation"("teamId", "createdAt");

-- CreateIndex
CREATE INDEX "Automation_status_teamId_idx" ON "Automation"("status", "teamId");

-- CreateIndex
CREATE INDEX "AutomationRun_status_dueAt_idx" ON "AutomationRun"("status", "dueAt");

-- CreateIndex
CREATE INDEX "AutomationRun_automationId_enteredAt_idx" ON "AutomationRun"("automationId", "enteredAt");

-- CreateIndex
CREATE INDEX "AutomationRun_teamId_contactId_status_idx" ON "AutomationRun"("teamId", "contactId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "AutomationRun_automationId_contactId_entryKey_key" ON "AutomationRun"("automationId", "contactId", "entryKey");

-- CreateIndex
CREATE INDEX "Contact_contactBookId_txid_id_idx" ON "Contact"("contactBookId", "txid", "id");

-- AddForeignKey
ALTER TABLE "Automation" ADD CONSTRAINT "Automation_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationVersion" ADD CONSTRAINT "AutomationVersion_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationRun" ADD CONSTRAINT "AutomationRun_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationRunLog" ADD CONSTRAINT "AutomationRunLog_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AutomationRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;
