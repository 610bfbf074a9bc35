// Where each step of a definition goes, apart from the zod schema so the dashboard's builder
// draws the same paths the runtime takes without bundling the validation (definition.ts).

/** The fields of a step that name where it goes (all optional: a left-out one has its default). */
export interface StepLinks {
  id: string;
  type: string;
  next?: string | null;
  then?: string | null;
  else?: string | null;
  timeoutNext?: string | null;
}

/**
 * The steps a step may go to, with the field naming each (null: the run ends there). Left out,
 * `next`, `then` and `else` go to the following step, `timeoutNext` ends the run.
 */
export function successors(steps: readonly StepLinks[], index: number): { field: string; to: string | null }[] {
  const s = steps[index];
  const following = index + 1 < steps.length ? steps[index + 1].id : null;
  const or = (v: string | null | undefined, dflt: string | null) => (v === undefined ? dflt : v);
  switch (s.type) {
    case 'exit':
      return [];
    case 'branch':
      return [
        { field: 'then', to: or(s.then, following) },
        { field: 'else', to: or(s.else, following) },
      ];
    case 'waitForEvent':
      return [
        { field: 'next', to: or(s.next, following) },
        { field: 'timeoutNext', to: or(s.timeoutNext, null) },
      ];
    default:
      return [{ field: 'next', to: or(s.next, following) }];
  }
}
