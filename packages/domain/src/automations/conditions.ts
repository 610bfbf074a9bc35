import {
  isQueryCondition,
  type ConditionGroup,
  type PropertyCondition,
  type SegmentMembershipCondition,
  type EmailActivityBranchCondition,
} from './definition';

// Conditions of branches and trigger filters, evaluated on one contact and the run's trigger
// event, with the reason in words for the run log. Pure: the runtime and the dry run share it.

export interface ContactFacts {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  subscribed: boolean;
  properties: Record<string, unknown>;
}

export interface RunContext {
  /** The trigger event: its name and properties (absent for the contactAdded trigger). */
  event?: { id: string; name: string; properties: Record<string, unknown> };
}

/**
 * Conditions that need a query (segment membership, engagement) plug in here: their outcome and
 * reason, read before the pure decision (run-facts.ts, loadQueryOutcomes). None known: the
 * condition does not hold.
 */
export interface ConditionHooks {
  evaluate?(
    condition: SegmentMembershipCondition | EmailActivityBranchCondition,
    contact: ContactFacts,
  ): { result: boolean; why: string } | null;
}

const MAX_PATH_DEPTH = 5;

function lookup(source: Record<string, unknown>, path: string): unknown {
  let value: unknown = source;
  const parts = path.split('.', MAX_PATH_DEPTH + 1);
  for (const part of parts) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = Object.prototype.hasOwnProperty.call(value, part) ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}

function fieldValue(c: PropertyCondition, contact: ContactFacts | null, ctx: RunContext): unknown {
  if (c.source === 'event') return ctx.event ? lookup(ctx.event.properties, c.field) : undefined;
  if (!contact) return undefined;
  if (c.field === 'email') return contact.email;
  if (c.field === 'firstName') return contact.firstName ?? undefined;
  if (c.field === 'lastName') return contact.lastName ?? undefined;
  if (c.field === 'subscribed') return contact.subscribed;
  if (c.field.startsWith('properties.')) return lookup(contact.properties, c.field.slice('properties.'.length));
  return lookup(contact.properties, c.field);
}

const asNumber = (v: unknown): number | null => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
};

function test(c: PropertyCondition, actual: unknown): boolean {
  const present = actual !== undefined && actual !== null && actual !== '';
  switch (c.operator) {
    case 'exists':
      return present;
    case 'notExists':
      return !present;
    case 'equals':
      return present && String(actual).toLowerCase() === String(c.value).toLowerCase();
    case 'notEquals':
      return !present || String(actual).toLowerCase() !== String(c.value).toLowerCase();
    case 'contains':
      return present && String(actual).toLowerCase().includes(String(c.value).toLowerCase());
    default: {
      const a = asNumber(actual);
      const b = asNumber(c.value);
      if (a === null || b === null) {
        // Dates (ISO strings) compare as instants.
        const da = typeof actual === 'string' ? Date.parse(actual) : NaN;
        const db = typeof c.value === 'string' ? Date.parse(c.value) : NaN;
        if (Number.isNaN(da) || Number.isNaN(db)) return false;
        return compare(c.operator, da, db);
      }
      return compare(c.operator, a, b);
    }
  }
}

const compare = (op: string, a: number, b: number) => (op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b);

const describe = (c: PropertyCondition, actual: unknown) =>
  `${c.source}.${c.field} ${c.operator}${c.value === undefined ? '' : ` ${JSON.stringify(c.value)}`} (was ${actual === undefined ? 'absent' : JSON.stringify(actual)})`;

export function evaluateConditions(
  group: ConditionGroup,
  contact: ContactFacts | null,
  ctx: RunContext,
  hooks: ConditionHooks = {},
): { result: boolean; why: string } {
  const outcomes = group.conditions.map((c) => {
    if (isQueryCondition(c)) {
      const hooked = contact ? hooks.evaluate?.(c, contact) : null;
      return hooked ?? { result: false, why: `${c.source} ${c.operator} (not evaluated)` };
    }
    const actual = fieldValue(c, contact, ctx);
    return { result: test(c, actual), why: describe(c, actual) };
  });
  const result = group.match === 'any' ? outcomes.some((o) => o.result) : outcomes.every((o) => o.result);
  const shown = outcomes.filter((o) => o.result === result).map((o) => o.why);
  return {
    result,
    why: `${group.match === 'any' ? 'any' : 'all'} of the conditions ${result ? 'held' : 'did not hold'}: ${shown.join('; ')}`,
  };
}
