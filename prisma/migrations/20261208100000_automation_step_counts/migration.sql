-- Per-step counts (GET /automations/{id}/steps) read an automation's ACTIVE runs by step: without
-- this index they would read every run the automation ever had, finished ones included.
CREATE INDEX "AutomationRun_automationId_status_stepId_idx" ON "AutomationRun"("automationId", "status", "stepId");
