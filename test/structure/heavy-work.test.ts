import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { productionSources, REPO_ROOT } from '@mailrail/testing/source-files';
import { heavyOperations, type HeavyOperation } from '@mailrail/platform/budgets/heavy-work';

// Tenant-sized work cannot bypass the resource budgets (docs/security.md, "Resource budgets"): a
// module that compiles a team's segment filter into SQL, or runs statements on the heavy pool, is
// listed here with the budget it runs under, and the module that takes that budget's place must
// name it. A new heavy feature (automations, say) fails this test until it says which budget
// bounds it.
const BUDGETED: Record<string, { operation: HeavyOperation; placeTakenIn: string }> = {
  'apps/api/src/segments/bounded-query.ts': { operation: 'segment', placeTakenIn: 'apps/api/src/segments/bounded-query.ts' },
  'apps/api/src/segments/service.ts': { operation: 'segment', placeTakenIn: 'apps/api/src/segments/bounded-query.ts' },
  'apps/api/src/segments/campaign-segment.ts': { operation: 'segment', placeTakenIn: 'apps/api/src/segments/bounded-query.ts' },
  // The pre-send check counts the exact audience through evaluateSegment.
  'apps/api/src/campaigns/pre-send.ts': { operation: 'segment', placeTakenIn: 'apps/api/src/segments/bounded-query.ts' },
  // Per-step counts of an automation aggregate its runs and log under the team's segment budget.
  'apps/api/src/automations/step-counts.ts': { operation: 'segment', placeTakenIn: 'apps/api/src/automations/step-counts.ts' },
  'apps/api/src/contacts/export.ts': { operation: 'export', placeTakenIn: 'apps/api/src/contacts/export.ts' },
  'apps/worker/src/campaigns/prepare-recipients.ts': {
    operation: 'campaign-preparation',
    placeTakenIn: 'apps/worker/src/campaigns/campaign-preparation.ts',
  },
  // A segment-entry trigger's batch evaluates the segment over contacts of the book.
  'apps/worker/src/automations/contact-triggers.ts': {
    operation: 'segment',
    placeTakenIn: 'apps/worker/src/automations/contact-triggers.ts',
  },
  'apps/worker/src/campaigns/campaign-preparation.ts': {
    operation: 'campaign-preparation',
    placeTakenIn: 'apps/worker/src/campaigns/campaign-preparation.ts',
  },
};
// Where the heavy pool is built and handed out, not used.
const WIRING = ['apps/api/src/deps.ts', 'apps/worker/src/deps.ts'];
const DEFINES_FILTER_SQL = 'packages/domain/src/audience/segments/segment-sql.ts';

const takesPlace = (text: string, operation: HeavyOperation) =>
  text.includes(`budgets.run('${operation}'`) ||
  text.includes(`budgets.acquire('${operation}'`) ||
  new RegExp(`runJobInBudget\\([^)]*'${operation}'`).test(text);

describe('heavy work runs under a budget', () => {
  it('every module that compiles a segment filter or uses the heavy pool is listed with its budget', () => {
    const heavy = productionSources()
      .filter(({ path }) => path !== DEFINES_FILTER_SQL && !WIRING.includes(path))
      .filter(({ text }) => text.includes('segmentFilterSql(') || text.includes('heavySql'))
      .map(({ path }) => path)
      .sort();
    expect(heavy.filter((path) => !(path in BUDGETED))).toEqual([]);
  });

  it("each listed module's budget is one of the table's, and its place is taken where the list says", () => {
    for (const [path, { operation, placeTakenIn }] of Object.entries(BUDGETED)) {
      expect([path, heavyOperations.includes(operation)]).toEqual([path, true]);
      expect([placeTakenIn, takesPlace(readFileSync(join(REPO_ROOT, placeTakenIn), 'utf8'), operation)]).toEqual([placeTakenIn, true]);
    }
  });

  it('the check recognises each way of taking a place, and only for its own operation', () => {
    expect(takesPlace("deps.budgets.run('segment', teamId, work)", 'segment')).toBe(true);
    expect(takesPlace("await deps.budgets.acquire('export', auth.teamId)", 'export')).toBe(true);
    expect(takesPlace("runJobInBudget(deps.budgets, 'contact-import', teamId, job, token, work)", 'contact-import')).toBe(true);
    expect(takesPlace("deps.budgets.run('preview', teamId, work)", 'segment')).toBe(false);
  });
});
