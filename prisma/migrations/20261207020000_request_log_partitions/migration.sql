-- The request log partitioned by UTC day of "createdAt", like the email log (docs/request-log.md):
-- the worker job request-log-partitions creates days ahead and drops whole days past
-- REQUEST_LOG_RETENTION_DAYS, instead of deleting rows (packages/domain/src/request-log/request-log-partitions.ts,
-- the same code as the email log: packages/domain/src/day-partitions/day-partitions.ts).
--
-- The rows already logged move to the DEFAULT partition "RequestLog_default", which also catches
-- any row whose day has no partition yet. Their days stay there (rows are never moved under running
-- queries), and the job deletes the rows of the DEFAULT partition past retention in small chunks.
-- A unique key of a partitioned table must contain the partition key: the primary key becomes
-- ("teamId", "createdAt", id), id still from its sequence, and is the one index: the list of
-- GET /api/v1/logs reads it backwards (newest first). The two indexes of before are gone, each
-- index costs every logged request a write (bench/request-log).
--
-- No semicolon or apostrophe may appear in a comment here, nor a semicolon inside a statement:
-- the Prisma pg adapter splits the script on every semicolon (so no DO blocks either).

BEGIN;

ALTER TABLE "RequestLog" RENAME TO "RequestLog_unpartitioned";
ALTER SEQUENCE "RequestLog_id_seq" OWNED BY NONE;

CREATE TABLE "RequestLog" (LIKE "RequestLog_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("createdAt");
ALTER SEQUENCE "RequestLog_id_seq" OWNED BY "RequestLog".id;
CREATE TABLE "RequestLog_default" PARTITION OF "RequestLog" DEFAULT;

-- Rows first, then keys and indexes: one bulk build per index instead of one insert per row.
INSERT INTO "RequestLog" SELECT * FROM "RequestLog_unpartitioned";
DROP TABLE "RequestLog_unpartitioned";

ALTER TABLE "RequestLog" ADD CONSTRAINT "RequestLog_pkey" PRIMARY KEY ("teamId", "createdAt", id);

COMMIT;
