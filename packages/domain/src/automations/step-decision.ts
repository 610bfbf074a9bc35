import { evaluateConditions, type ConditionHooks, type ContactFacts, type RunContext } from './conditions';
import { nextStepId, stepById, type Definition, type Step } from './definition';
import { contactTimeZone, nextTimeOfDay } from './wait-time';

// What one step of a run does, decided from facts read in the step's transaction. Pure, so the
// worker's runtime and the API's dry run take the same path: the runtime then applies `effect`
// and the new state in that same transaction; the dry run only records the path.

export interface RunState {
  stepId: string;
  enteredAt: Date;
  /** Set while a waitForEvent step waits: since when an event counts. */
  waitSince: Date | null;
}

export interface StepFacts {
  /** Null when the contact was deleted. */
  contact: ContactFacts | null;
  context: RunContext;
  /** The contact's address is on the team's suppression list. */
  suppressed: boolean;
  /** The goal event arrived since the run entered. */
  goalReached: boolean;
  /** The event awaited by a waitForEvent step arrived since waitSince (its id), or null. */
  awaitedEventId: string | null;
  /** The outcomes of the current branch's segment and email activity conditions (run-facts.ts, loadConditionHooks). */
  conditionHooks?: ConditionHooks;
}

/** A side effect the runtime performs in the step's transaction. */
export type StepEffect =
  | { type: 'sendEmail'; step: Extract<Step, { type: 'sendEmail' }> }
  | { type: 'updateContact'; properties: Record<string, string | number | boolean | null> }
  | { type: 'addToBook'; contactBookId: string }
  | { type: 'removeFromBook'; contactBookId: string }
  | { type: 'webhook'; payload: Record<string, string | number | boolean> };

export type StepDecision =
  /** The run ends: COMPLETED (end of path, goal) or EXITED (exit step, unsubscribed, suppressed, deleted). */
  | { kind: 'finish'; status: 'COMPLETED' | 'EXITED'; outcome: string; detail: string; step: Step | null; effect?: undefined }
  /** The step ran: go to `next` (null ends the run, COMPLETED) at `dueAt`. */
  | { kind: 'advance'; outcome: string; detail: string; step: Step; next: string | null; dueAt: Date; effect?: StepEffect }
  /** A waitForEvent step starts (or keeps) waiting until `until`; no log entry. */
  | { kind: 'wait'; step: Step; since: Date; until: Date; effect?: undefined };

/**
 * Outcomes that end a run at the step without carrying it out (or at an exit step), as the log
 * names them: per-step counts show them as "exited". `failed` is also a step whose side effect
 * could not be done (run-step.ts).
 */
export const RUN_ENDING_OUTCOMES = ['failed', 'contact-deleted', 'goal', 'unsubscribed', 'suppressed', 'exit'] as const;

export function decideStep(def: Definition, run: RunState, facts: StepFacts, now: Date): StepDecision {
  const found = stepById(def, run.stepId);
  const step = found?.step ?? null;
  const finish = (status: 'COMPLETED' | 'EXITED', outcome: string, detail: string): StepDecision => ({
    kind: 'finish',
    status,
    outcome,
    detail,
    step,
  });
  if (!found || !step) return finish('EXITED', 'failed', `step "${run.stepId}" is not in this version`);
  if (!facts.contact) return finish('EXITED', 'contact-deleted', 'the contact was deleted');
  if (facts.goalReached) return finish('COMPLETED', 'goal', 'the goal event arrived');
  if (!facts.contact.subscribed) return finish('EXITED', 'unsubscribed', 'the contact is unsubscribed');
  if (facts.suppressed) return finish('EXITED', 'suppressed', "the contact's address is on the suppression list");

  const advance = (outcome: string, detail: string, field = 'next', dueAt = now, effect?: StepEffect): StepDecision => ({
    kind: 'advance',
    outcome,
    detail,
    step,
    next: nextStepId(def, found.index, field),
    dueAt,
    effect,
  });

  switch (step.type) {
    case 'exit':
      return finish('EXITED', 'exit', 'an exit step');
    case 'sendEmail':
      return advance('sent', `email to ${facts.contact.email}`, 'next', now, { type: 'sendEmail', step });
    case 'wait': {
      if (step.seconds !== undefined) {
        const until = new Date(now.getTime() + step.seconds * 1000);
        return advance('waited', `waiting ${step.seconds} s, until ${until.toISOString()}`, 'next', until);
      }
      const tz = contactTimeZone(facts.contact.properties, step.timezoneProperty);
      const until = nextTimeOfDay(now, step.untilTime!, tz);
      return advance('waited', `waiting until ${step.untilTime} ${tz} (${until.toISOString()})`, 'next', until);
    }
    case 'waitForEvent': {
      if (facts.awaitedEventId) return advance('event-arrived', `"${step.event}" arrived (event ${facts.awaitedEventId})`);
      if (run.waitSince === null) return { kind: 'wait', step, since: now, until: new Date(now.getTime() + step.timeoutSeconds * 1000) };
      // The timeout from the wait's start, not dueAt: a wake-up hint moves dueAt.
      const timeoutAt = new Date(run.waitSince.getTime() + step.timeoutSeconds * 1000);
      if (now >= timeoutAt) return advance('timed-out', `no "${step.event}" within ${step.timeoutSeconds} s`, 'timeoutNext');
      // Woken early (a goal hint, another event of the contact): keep waiting until the timeout.
      return { kind: 'wait', step, since: run.waitSince, until: timeoutAt };
    }
    case 'branch': {
      const { result, why } = evaluateConditions(step.condition, facts.contact, facts.context, facts.conditionHooks);
      return advance(result ? 'then' : 'else', why, result ? 'then' : 'else');
    }
    case 'updateContact':
      return advance('updated', `set ${Object.keys(step.properties).join(', ')}`, 'next', now, {
        type: 'updateContact',
        properties: step.properties,
      });
    case 'addToBook':
      return advance('added', `added to book ${step.contactBookId}`, 'next', now, { type: 'addToBook', contactBookId: step.contactBookId });
    case 'removeFromBook':
      return advance('removed', `removed from book ${step.contactBookId}`, 'next', now, {
        type: 'removeFromBook',
        contactBookId: step.contactBookId,
      });
    case 'webhook':
      return advance('webhook', 'automation.webhook event recorded for the team’s webhooks', 'next', now, {
        type: 'webhook',
        payload: step.payload ?? {},
      });
  }
}
