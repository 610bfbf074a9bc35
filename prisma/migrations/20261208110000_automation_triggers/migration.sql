-- The segment-entry and date triggers of automations (docs/automations.md, "Segment entry" and
-- "Date trigger").

-- Contact."changedTxid": the transaction that last wrote the row (insert or update), so the
-- triggers read a book's changed contacts in commit order, as enrollment reads events. The column
-- first, then its default, so existing rows keep NULL and the table is not rewritten.
ALTER TABLE "Contact" ADD COLUMN "changedTxid" BIGINT;
ALTER TABLE "Contact" ALTER COLUMN "changedTxid" SET DEFAULT (pg_current_xact_id())::text::bigint;

-- Every update stamps it, whichever path wrote the contact (API, imports, unsubscribe links,
-- automation steps): none of them has to know about automations.
-- The body spells its semicolons as \073 in an E'' string: Prisma's migration runner splits the
-- file at every semicolon, even inside quotes.
CREATE FUNCTION "contact_changed_txid"() RETURNS trigger LANGUAGE plpgsql AS
E'BEGIN NEW."changedTxid" := (pg_current_xact_id())::text::bigint\073 RETURN NEW\073 END';
CREATE TRIGGER "Contact_changedTxid" BEFORE UPDATE ON "Contact" FOR EACH ROW EXECUTE FUNCTION "contact_changed_txid"();

-- CreateIndex
CREATE INDEX "Contact_contactBookId_changedTxid_id_idx" ON "Contact"("contactBookId", "changedTxid", "id");

-- CreateTable
CREATE TABLE "AutomationTriggerState" (
    "automationId" TEXT NOT NULL,
    "teamId" INTEGER NOT NULL,
    "triggerKey" TEXT NOT NULL,
    "enrollFromTxid" BIGINT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "baselineDone" BOOLEAN NOT NULL DEFAULT false,
    "scanAfter" TEXT NOT NULL DEFAULT '',
    "passStartedAt" TIMESTAMPTZ(3) NOT NULL,
    "contactsTxid" BIGINT NOT NULL,
    "contactsLastId" TEXT NOT NULL DEFAULT '',
    "eventsTxid" BIGINT NOT NULL,
    "eventsLastId" TEXT NOT NULL DEFAULT '',
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AutomationTriggerState_pkey" PRIMARY KEY ("automationId")
);

-- CreateTable
CREATE TABLE "AutomationSegmentMember" (
    "automationId" TEXT NOT NULL,
    "contactId" TEXT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AutomationSegmentMember_pkey" PRIMARY KEY ("automationId","contactId")
);

-- CreateTable
CREATE TABLE "AutomationDateSchedule" (
    "automationId" TEXT NOT NULL,
    "contactId" TEXT NOT NULL,
    "dateValue" TEXT,
    "dueAt" TIMESTAMPTZ(3),
    "firedValue" TEXT,

    CONSTRAINT "AutomationDateSchedule_pkey" PRIMARY KEY ("automationId","contactId")
);

-- CreateIndex
CREATE INDEX "AutomationTriggerState_teamId_idx" ON "AutomationTriggerState"("teamId");

-- CreateIndex
CREATE INDEX "AutomationSegmentMember_contactId_idx" ON "AutomationSegmentMember"("contactId");

-- CreateIndex
CREATE INDEX "AutomationDateSchedule_automationId_dueAt_idx" ON "AutomationDateSchedule"("automationId", "dueAt");

-- CreateIndex
CREATE INDEX "AutomationDateSchedule_contactId_idx" ON "AutomationDateSchedule"("contactId");

-- AddForeignKey
ALTER TABLE "AutomationTriggerState" ADD CONSTRAINT "AutomationTriggerState_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationSegmentMember" ADD CONSTRAINT "AutomationSegmentMember_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationSegmentMember" ADD CONSTRAINT "AutomationSegmentMember_contactId_fkey" FOREIGN KEY ("contactId") REFERENCES "Contact"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationDateSchedule" ADD CONSTRAINT "AutomationDateSchedule_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationDateSchedule" ADD CONSTRAINT "AutomationDateSchedule_contactId_fkey" FOREIGN KEY ("contactId") REFERENCES "Contact"("id") ON DELETE CASCADE ON UPDATE CASCADE;
