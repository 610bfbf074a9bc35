-- AlterTable: the id of the transaction that wrote each event (the feed order, event-feed.ts).
-- Rows stored before get 0 (before every new one) without rewriting the table, then new rows get their writer.
-- No semicolon or apostrophe in a comment here: the Prisma pg adapter splits the script on semicolons.
ALTER TABLE "Event" ADD COLUMN "txid" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "Event" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id())::text::bigint;

-- CreateIndex
CREATE INDEX "Event_teamId_txid_id_idx" ON "Event"("teamId", "txid", "id");
