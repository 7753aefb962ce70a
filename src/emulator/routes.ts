/** Maps `METHOD /path` (relative to /api/v1) to an endpoint id of `ENDPOINTS` and its path parameters. */
import { ENDPOINTS, type EndpointId } from '../contract/index.js';

interface CompiledRoute {
  id: EndpointId;
  method: string;
  pattern: RegExp;
  names: string[];
}

const ROUTES: CompiledRoute[] = (Object.keys(ENDPOINTS) as EndpointId[]).map((id) => {
  const names: string[] = [];
  const source = ENDPOINTS[id].path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { id, method: ENDPOINTS[id].method, pattern: new RegExp(`^${source}/?$`), names };
});

export interface RouteMatch {
  endpoint: EndpointId;
  params: Record<string, string>;
}

export function matchRoute(method: string, path: string): RouteMatch | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    route.names.forEach((name, i) => {
      params[name] = decodeURIComponent(m[i + 1] ?? '');
    });
    return { endpoint: route.id, params };
  }
  return undefined;
}
