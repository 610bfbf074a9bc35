-- The snapshot taken when an automation was last activated or resumed (pg_current_snapshot() as
-- text): a source row enrolls only when its transaction is not visible in it, i.e. committed after
-- that moment. enrollFromTxid (the snapshot's xmin) stays the readers' starting point. Alone it let
-- rows of transactions that had committed before, but after the oldest one still running anywhere
-- on the server, enroll (docs/automations.md, "Pause and resume").
ALTER TABLE "Automation" ADD COLUMN "enrollSnapshot" TEXT;
