import { isRouteErrorResponse, Link, useRouteError } from 'react-router';

/** A page that failed to load or render (a chunk lost after a deploy, a bug): say so, offer a way on. */
export function RouteError() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : String(error);
  return (
    <main className="content">
      <h1>Something went wrong</h1>
      <p role="alert" className="notice notice-error">
        {message}
      </p>
      <p>
        <button type="button" className="btn" onClick={() => window.location.reload()}>
          Reload the page
        </button>{' '}
        <Link to="/">Go to the start page</Link>
      </p>
    </main>
  );
}
