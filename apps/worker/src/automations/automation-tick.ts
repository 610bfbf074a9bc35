import { advanceDueRuns, type AdvanceBudget } from './advance-runs';
import { advanceContactTriggers, type ContactTriggerDeps } from './contact-triggers';
import { enrollFromSources } from './enroll-runs';
import type { RunStepDeps } from './run-step';

// The automations' periodic job (every AUTOMATION_TICK_MS, once across replicas): enroll from new
// events, then from the contact triggers (segment entry, dates: contact-triggers.ts), then advance
// the due runs. It only wakes work up: every fact it acts on is in PostgreSQL,
// so a Redis that loses this job's scheduler or its next job loses a tick, never a step.

export interface TickBudget extends AdvanceBudget {
  /** Source rows one tick reads per team and source (one INSERT of runs); `perTeam` when left out. */
  enrollBatch?: number;
}

export async function automationTick(deps: RunStepDeps & Pick<ContactTriggerDeps, 'budgets'>, budget: TickBudget) {
  const enrollment = await enrollFromSources(deps, budget.enrollBatch ?? budget.perTeam);
  const triggers = await advanceContactTriggers(deps, budget.perTeam);
  const steps = await advanceDueRuns(deps, budget);
  return { ...enrollment, triggerContacts: triggers.evaluated, triggerEnrolled: triggers.enrolled, ...steps };
}
