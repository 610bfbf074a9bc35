import { z } from 'zod';
import type { ApiDeps } from '../../deps';
import { declareRoute } from '../../http/api-route';
import { requireSession, sessionOf } from '../session/middleware';
import { createTeamAsOperator, createTeamBody } from './operators';

const route = declareRoute<ApiDeps>();

/** The instance's business, not one team's: no team in the path. */
export const instanceRoutes = [
  route({
    method: 'post',
    path: '/api/dashboard/teams',
    tag: 'Instance',
    summary: "Creates a team, by one of the instance's operators (DASHBOARD_OPERATORS), who becomes its ADMIN",
    middleware: [requireSession],
    errors: [403],
    body: createTeamBody,
    response: z.object({ id: z.number().int(), name: z.string(), role: z.literal('ADMIN') }),
    serve: async (deps, { body }, req, res) => void res.json(await createTeamAsOperator(deps, sessionOf(req).userId, body)),
  }),
];
