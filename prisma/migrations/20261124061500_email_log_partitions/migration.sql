-- The email log partitioned by time (docs/email-log.md). Email ids are time-ordered from now on
-- ("000" + creation time in base-36 milliseconds + random), so "Email" is partitioned BY RANGE (id)
-- and "EmailEvent" BY RANGE ("emailId") on the same UTC-day boundaries: a lookup by id prunes to
-- one partition with no change to the query, and the events of an email live in the partition of
-- the same day, so both drop together. Prisma does not model partitioning: schema.prisma describes
-- the columns, and the email-partitions job of the worker creates days ahead and drops days past
-- retention (apps/worker/src/emails/email-partitions.ts).
--
-- Random ids minted before this migration (legacy) are kept as they are: nearly all of them sort
-- at or above 0001gcmxpmo0 (the id prefix of 2100-01-01) and live in "Email_legacy", the few
-- that sort below it land in the DEFAULT partition, which also catches any id whose day has no
-- partition yet. Day partitions are created by the worker job only (its first run comes as the
-- worker starts, so start it before the API takes traffic): a day whose rows the DEFAULT
-- partition already caught stays there, rows are never moved under running queries.
--
-- No foreign key from "EmailEvent" to "Email" any more: a foreign key onto a partitioned table
-- makes every detach or drop of a partition scan the referencing table, and costs a lookup and a
-- row lock per event insert. Every event is written by a statement that has just read or written
-- its email, and events leave with the partition of their day.
--
-- No semicolon or apostrophe may appear in a comment here, nor a semicolon inside a statement:
-- the Prisma pg adapter splits the script on every semicolon (so no DO blocks either).

BEGIN;

ALTER TABLE "Email" RENAME TO "Email_unpartitioned";
ALTER TABLE "EmailEvent" RENAME TO "EmailEvent_unpartitioned";
ALTER SEQUENCE "EmailEvent_id_seq" OWNED BY NONE;

CREATE TABLE "Email" (LIKE "Email_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE (id);
CREATE TABLE "EmailEvent" (LIKE "EmailEvent_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("emailId");
ALTER SEQUENCE "EmailEvent_id_seq" OWNED BY "EmailEvent".id;

CREATE TABLE "Email_legacy" PARTITION OF "Email" FOR VALUES FROM ('0001gcmxpmo0') TO (MAXVALUE);
CREATE TABLE "EmailEvent_legacy" PARTITION OF "EmailEvent" FOR VALUES FROM ('0001gcmxpmo0') TO (MAXVALUE);
CREATE TABLE "Email_default" PARTITION OF "Email" DEFAULT;
CREATE TABLE "EmailEvent_default" PARTITION OF "EmailEvent" DEFAULT;

-- Rows first, then keys and indexes: one bulk build per index instead of one insert per row.
INSERT INTO "Email" SELECT * FROM "Email_unpartitioned";
INSERT INTO "EmailEvent" SELECT * FROM "EmailEvent_unpartitioned";
DROP TABLE "EmailEvent_unpartitioned";
DROP TABLE "Email_unpartitioned";

ALTER TABLE "Email" ADD CONSTRAINT "Email_pkey" PRIMARY KEY (id);
-- A unique key of a partitioned table must contain the partition key.
ALTER TABLE "EmailEvent" ADD CONSTRAINT "EmailEvent_pkey" PRIMARY KEY (id, "emailId");
CREATE INDEX "EmailEvent_emailId_createdAt_idx" ON "EmailEvent" USING btree ("emailId", "createdAt");
CREATE INDEX "Email_campaignId_idx" ON "Email" USING btree ("campaignId");
CREATE INDEX "Email_latestStatus_scheduledAt_idx" ON "Email" USING btree ("latestStatus", "scheduledAt");
CREATE INDEX "Email_searchText_idx" ON "Email" USING gin ("searchText" gin_trgm_ops);
CREATE INDEX "Email_sesEmailId_idx" ON "Email" USING btree ("sesEmailId");
CREATE INDEX "Email_teamId_createdAt_id_idx" ON "Email" USING btree ("teamId", "createdAt" DESC, id DESC);
CREATE INDEX "Email_teamId_domainId_createdAt_id_idx" ON "Email" USING btree ("teamId", "domainId", "createdAt" DESC, id DESC);
CREATE INDEX "Email_teamId_latestStatus_createdAt_id_idx" ON "Email" USING btree ("teamId", "latestStatus", "createdAt" DESC, id DESC);
CREATE INDEX "Email_toAddresses_idx" ON "Email" USING gin ("toAddresses");
ALTER TABLE "Email" ADD CONSTRAINT "Email_domainId_fkey" FOREIGN KEY ("domainId") REFERENCES "Domain"(id) ON UPDATE CASCADE ON DELETE SET NULL;
ALTER TABLE "Email" ADD CONSTRAINT "Email_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"(id) ON UPDATE CASCADE ON DELETE CASCADE;

COMMIT;
