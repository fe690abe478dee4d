/**
 * The route serving `path`: its own, or one whose last segment, or the one before, is `{id}`
 * (`/v1/responses/{id}`, `/v1/responses/{id}/input_items`),
 * so the request log and counters name the route and not every id. `path` when neither is.
 */
export function routeKey(routes: Readonly<Record<string, unknown>>, path: string): string {
  if (routes[path] !== undefined) return path;
  const cut = path.lastIndexOf('/');
  if (cut <= 0 || cut === path.length - 1) return path;
  const key = `${path.slice(0, cut)}/{id}`;
  if (routes[key] !== undefined) return key;
  // An id one segment up: `/v1/responses/{id}/input_items`.
  const up = path.lastIndexOf('/', cut - 1);
  if (up <= 0 || up === cut - 1) return path;
  const inner = `${path.slice(0, up)}/{id}${path.slice(cut)}`;
  return routes[inner] !== undefined ? inner : path;
}
