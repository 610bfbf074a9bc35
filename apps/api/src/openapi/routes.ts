import path from 'node:path';
import express, { Router } from 'express';
import type { ApiDeps } from '../deps';
import { apiDocumentation } from './document';

const swaggerUiDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));

// A self-contained docs page: Swagger UI's assets come from the swagger-ui-dist package, not a CDN.
const docsPage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>mailrail API</title>
  <link rel="stylesheet" href="/api/v1/ui/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/api/v1/ui/assets/swagger-ui-bundle.js"></script>
  <script src="/api/v1/ui/init.js"></script>
</body>
</html>`;

const initScript = `window.ui = SwaggerUIBundle({ url: '/api/v1/doc', dom_id: '#docs', deepLinking: true, persistAuthorization: true });`;

/** GET /api/v1/doc (OpenAPI 3.1 JSON) and GET /api/v1/ui (the docs page), both without auth. */
export function openApiRoutes(deps: ApiDeps): Router {
  const r = Router();
  let document: unknown;
  r.get('/api/v1/doc', (_req, res) => {
    document ??= apiDocumentation(`${deps.config.PUBLIC_URL}`);
    res.json(document);
  });
  r.get('/api/v1/ui', (_req, res) => {
    res.type('html').send(docsPage);
  });
  r.get('/api/v1/ui/init.js', (_req, res) => {
    res.type('application/javascript').send(initScript);
  });
  r.use('/api/v1/ui/assets', express.static(swaggerUiDir, { index: false, maxAge: '1d' }));
  return r;
}
