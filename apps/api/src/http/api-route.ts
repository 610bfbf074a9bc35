import type { IncomingHttpHeaders } from 'node:http';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { z, ZodObject, ZodType } from 'zod';
import type { RouteDoc } from '../openapi/registry';
import type { AuthContext } from './auth';
import { jsonBody } from './json-body';
import { parseOrThrow } from './validate';

// One declaration per route: its method, path, schemas, words, errors and handler. The express
// router (routerOf) and the OpenAPI document (openapi/registry.ts documentRoute) are both made
// from it: the public API's (and the accept lane takes its two routes from it too), and the
// dashboard's own routes (dashboard/routes.ts, documented apart for the web app's types).

type Parsed<S> = S extends ZodType ? z.output<S> : undefined;

/** What a handler gets: the request's key context and its inputs, parsed with the declared schemas. */
export interface RouteInput<P, Q, B> {
  auth: AuthContext;
  /** The path parameters parsed with `params` (a 400 "Invalid path" otherwise). */
  params: Parsed<P>;
  /** The query parsed with `query` (a 400 "Invalid query" otherwise). */
  query: Parsed<Q>;
  /** The JSON body parsed with `body` (an absent body is `{}`); undefined for a route with `ownBody`. */
  body: Parsed<B>;
  headers: IncomingHttpHeaders;
}

/**
 * How a route answers: `handle` returns the JSON answer (sent with `status`, 200 by default), or
 * `serve` writes the answer itself (a stream, a CSV, a pre-serialized JSON text).
 */
type RouteAnswer<D, I> =
  | { handle(deps: D, input: I): Promise<unknown>; serve?: never }
  | { serve(deps: D, input: I, req: Request, res: Response): Promise<void>; handle?: never };

export type ApiRoute<
  D,
  P extends ZodObject | undefined = ZodObject | undefined,
  Q extends ZodObject | undefined = ZodObject | undefined,
  B extends ZodType | undefined = ZodType | undefined,
> = RouteDoc & {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body is not parsed before the handler: it reads it itself (`serve`), because it is not
   * JSON (a CSV upload) or is read only once the route has its place in a budget. `body` still
   * documents it. routerOf does not put http/json-body.ts in front of such a route.
   */
  ownBody?: 'stream' | 'late-json';
  /** Parses the JSON body instead of `body` (which still documents it): a union told apart by a key, each shape with its own errors. */
  parseBody?: (body: unknown) => Parsed<B>;
  /** Middleware run before the inputs are parsed (a raw body parser). */
  middleware?: RequestHandler[];
} & RouteAnswer<D, RouteInput<P, Q, B>>;

/** Declares a route of a capability whose handlers take `D`, with its input types inferred from its schemas. */
export const declareRoute =
  <D>() =>
  <P extends ZodObject | undefined = undefined, Q extends ZodObject | undefined = undefined, B extends ZodType | undefined = undefined>(
    route: ApiRoute<D, P, Q, B>,
  ): ApiRoute<D> =>
    route as unknown as ApiRoute<D>;

/** The declared body of a route, parsed as the router parses it (an absent body is an empty object). */
export function parseRouteBody<B>(route: { body?: ZodType<B>; parseBody?: (body: unknown) => B }, body: unknown): B {
  const json = body === undefined ? {} : body;
  if (route.parseBody) return route.parseBody(json);
  return (route.body ? parseOrThrow(route.body, json) : undefined) as B;
}

/** A capability's routes with the dependencies their handlers take, ready to be served. */
export interface BoundRoutes {
  routes: readonly ApiRoute<never>[];
  deps: unknown;
}

export const bindRoutes = <D>(routes: readonly ApiRoute<D>[], deps: D): BoundRoutes => ({ routes, deps });

/** The express handler of one declaration: parse params, query and body (in that order), then answer. */
function serveRoute(route: ApiRoute<unknown>, deps: unknown): RequestHandler {
  return async (req, res) => {
    const input: RouteInput<ZodObject | undefined, ZodObject | undefined, ZodType | undefined> = {
      auth: req.auth,
      params: route.params ? parseOrThrow(route.params, req.params, 'path') : undefined,
      query: route.query ? parseOrThrow(route.query, req.query, 'query') : undefined,
      body: route.ownBody ? undefined : parseRouteBody(route, req.body),
      headers: req.headers,
    };
    if (route.serve) return route.serve(deps, input, req, res);
    const answer = await route.handle(deps, input);
    res.status(route.status ?? 200).json(answer);
  };
}

/** The declaration's path under `prefix` (the router is mounted there). */
const pathUnder = (path: string, prefix: string) => {
  if (!path.startsWith(`${prefix}/`)) throw new Error(`route ${path} is not under ${prefix}`);
  return path.slice(prefix.length);
};

/** The path's segment count, then the kind of each segment: a literal (0) before a parameter (1). */
const matchKey = (path: string) => {
  const segments = path.split('/');
  return [segments.length, ...segments.map((s) => (s.startsWith(':') ? 1 : 0))];
};

/**
 * Orders routes so that a literal segment is tried before a parameter at the same place
 * (/contacts/bulk before /contacts/:contactId) whatever the order of the declarations. Only
 * paths of as many segments can match the same URL; among those, the declarations' order stays.
 */
export function matchingOrder<T extends { path: string }>(routes: readonly T[]): T[] {
  const keyed = routes.map((r, i) => ({ r, i, key: matchKey(r.path) }));
  keyed.sort((a, b) => {
    for (let k = 0; k < a.key.length; k++) if (a.key[k] !== b.key[k]) return a.key[k] - b.key[k];
    return a.i - b.i;
  });
  return keyed.map((k) => k.r);
}

/**
 * One router serving every route of `capabilities`, mounted at `prefix` (`/api/v1`). A route's JSON
 * body (up to `bodyLimit`) is read after the middleware in front of the router (the key or the
 * session, then the rate limit) and only for a route that does not read its own (`ownBody`).
 * `mergeParams` when the prefix has parameters of its own (`/api/dashboard/teams/:teamId`).
 */
export function routerOf(capabilities: readonly BoundRoutes[], prefix: string, opts: { bodyLimit: string; mergeParams?: boolean }): Router {
  const r = Router({ mergeParams: opts.mergeParams ?? false });
  const readJson = jsonBody(opts.bodyLimit);
  const all = capabilities.flatMap((c) => c.routes.map((route) => ({ route: route as ApiRoute<unknown>, deps: c.deps, path: route.path })));
  for (const { route, deps, path } of matchingOrder(all)) {
    r[route.method](pathUnder(path, prefix), ...(route.ownBody ? [] : readJson), ...(route.middleware ?? []), serveRoute(route, deps));
  }
  return r;
}
