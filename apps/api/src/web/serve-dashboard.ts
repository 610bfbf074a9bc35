import { existsSync } from 'node:fs';
import path from 'node:path';
import compression from 'compression';
import express, { Router, type RequestHandler } from 'express';
import type { Config } from '@mailrail/platform/config/schema';
import { notFound } from '@mailrail/domain/errors/api-error';
import { DASHBOARD_CSP } from '../http/security-headers';

// The dashboard app (apps/web, built to DASHBOARD_WEB_DIR) served by the API at `/`: same origin,
// one port. Registered after every API route, so it can never shadow one; paths of the server's
// own surfaces never fall back to the app, so an unknown /api/... stays a JSON 404.

const SERVER_PATHS = /^\/(api|admin|health|ready|metrics|subscribe|unsubscribe)(\/|$)/i;
// Vite names built assets by content hash (assets/index-3f2a1b.js): a file's URL never changes content.
const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_BUILT_PAGE = `<!doctype html><meta charset="utf-8"><title>mailrail</title>
<p>The mailrail dashboard is not built yet. Run <code>npm run build</code> (or <code>npm start</code>, which builds it), then reload.</p>
<p>The API is at <a href="/api/v1/ui">/api/v1/ui</a>.</p>`;

export function dashboardApp(config: Pick<Config, 'DASHBOARD_WEB_DIR'>): Router {
  const dir = path.resolve(config.DASHBOARD_WEB_DIR);
  const indexFile = path.join(dir, 'index.html');
  const r = Router();

  // The app's JavaScript is about 600 KB as built and under 200 KB gzipped on first load: compress
  // what the browser accepts (the 300 KB first-load budget is a compressed figure).
  r.use(compression());
  r.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      index: false,
      redirect: false,
      setHeaders: (res) => res.setHeader('Cache-Control', IMMUTABLE),
    }),
  );
  // A missing asset is a 404, never the app's shell (a stale page asking for an old hash must fail visibly).
  r.use('/assets', (req, _res, next) => next(notFound(`Asset ${req.path} not found`)));
  // Other top-level files (favicon, robots.txt): revalidated, their names are not hashed.
  r.use(express.static(dir, { index: false, redirect: false, setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache') }));

  const appShell: RequestHandler = (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || SERVER_PATHS.test(req.path)) return next();
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    // Built or not is checked per request: `npm run build` may finish after the server started.
    if (!existsSync(indexFile)) {
      res.status(200).type('html').setHeader('Cache-Control', 'no-store');
      return void res.send(NOT_BUILT_PAGE);
    }
    // Client-side routes (/emails, /domains/3, /reset-password) all get the app's shell.
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(indexFile, (err) => err && next(err));
  };
  r.use(appShell);
  return r;
}
