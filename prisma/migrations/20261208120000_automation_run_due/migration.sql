-- The fair claim of due automation runs reads each automation's earliest due runs by keyset
-- (apps/worker/src/automations/advance-runs.ts) instead of ranking every due run at each tick.
CREATE INDEX "AutomationRun_automationId_status_dueAt_idx" ON "AutomationRun"("automationId", "status", "dueAt");
