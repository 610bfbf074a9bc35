import { successors } from '@mailrail/domain/automations/successors';

// The builder's working copy of a definition: plain objects as the API answered them, so a field or
// a kind this dashboard does not know survives an edit of the others untouched.

export type Loose = Record<string, unknown>;
export interface StepDraft extends Loose {
  id: string;
  type: string;
}
export interface Draft {
  name: string;
  trigger: Loose;
  reEntry: Loose;
  goal: string;
  steps: StepDraft[];
}

/** A fresh step of `type`, with an id no other step has. */
/** Short words for ids of new steps: "email-2" reads better in the run log than "sendEmail-2". */
const ID_WORD: Record<string, string> = {
  sendEmail: 'email',
  waitForEvent: 'wait-for-event',
  branch: 'check',
  updateContact: 'update',
  addToBook: 'add-to-book',
  removeFromBook: 'remove-from-book',
};

export function newStep(type: string, steps: StepDraft[], from: string): StepDraft {
  const taken = new Set(steps.map((s) => s.id));
  const word = ID_WORD[type] ?? type;
  let n = 1;
  while (taken.has(`${word}-${n}`)) n++;
  const id = `${word}-${n}`;
  switch (type) {
    case 'sendEmail':
      return { id, type, from, subject: '', html: '' };
    case 'wait':
      return { id, type, seconds: 86_400 };
    case 'waitForEvent':
      return { id, type, event: '', timeoutSeconds: 3 * 86_400 };
    case 'branch':
      return { id, type, condition: { match: 'all', conditions: [{ source: 'contact', field: '', operator: 'equals', value: '' }] } };
    case 'updateContact':
      return { id, type, properties: { '': '' } };
    case 'addToBook':
    case 'removeFromBook':
      return { id, type, contactBookId: '' };
    default:
      return { id, type };
  }
}

/** Steps whose every way in is a labelled path (a branch's yes/no, an event's arrival or timeout, a jump): drawn indented under it. */
export function incomingPaths(steps: StepDraft[]): Map<string, { label: string; indent: boolean }> {
  const incoming = new Map<string, { from: number; field: string }[]>();
  steps.forEach((_, i) => {
    for (const { field, to } of successors(steps, i)) if (to !== null) incoming.set(to, [...(incoming.get(to) ?? []), { from: i, field }]);
  });
  const out = new Map<string, { label: string; indent: boolean }>();
  steps.forEach((s, i) => {
    const ins = incoming.get(s.id) ?? [];
    const plain = ins.some((e) => e.from === i - 1 && e.field === 'next' && steps[e.from].type !== 'waitForEvent');
    if (plain || i === 0) return;
    if (!ins.length) {
      out.set(s.id, { label: 'No step leads here: no contact reaches this step', indent: false });
      return;
    }
    const words = ins.map(({ from, field }) => {
      const name = `“${steps[from].id}”`;
      if (field === 'then') return `if ${name} holds`;
      if (field === 'else') return `if ${name} does not hold`;
      if (field === 'timeoutNext') return `when ${name} times out`;
      if (steps[from].type === 'waitForEvent') return `when the event of ${name} arrives`;
      return `after ${name}`;
    });
    out.set(s.id, { label: `Path: ${words.join(', or ')}`, indent: true });
  });
  return out;
}

/** The body of the PATCH that saves the draft (a new version). */
export function patchBody(d: Draft): Loose {
  return {
    name: d.name.trim(),
    trigger: d.trigger,
    reEntry: d.reEntry,
    goal: d.goal.trim() ? { event: d.goal.trim() } : null,
    steps: d.steps,
  };
}

/** The server's validation messages by path ("steps.2.from"), from the error of the last save. */
export function issuesOf(error: unknown): {
  count: number;
  at: (...path: (string | number)[]) => string | undefined;
  under: (...path: (string | number)[]) => string[];
} {
  // An ApiError's issues, read by shape so this module stays free of the fetch client.
  const given = (error as { issues?: { path: (string | number)[]; message: string }[] } | null)?.issues;
  const issues = Array.isArray(given) ? given : [];
  const key = (p: (string | number)[]) => p.join('.');
  return {
    count: issues.length,
    at: (...path) => issues.find((i) => key(i.path) === key(path))?.message,
    under: (...path) => issues.filter((i) => key(i.path) === key(path) || key(i.path).startsWith(`${key(path)}.`)).map((i) => i.message),
  };
}
export type Issues = ReturnType<typeof issuesOf>;
