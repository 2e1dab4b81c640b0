/**
 * The resource is this server's origin (one audience for /mcp, /s/<skill>/mcp, SSE and the
 * admin API), and SDK clients send exactly that, taken from the protected resource metadata.
 * Clients that send their server URL instead (`resource=https://host/mcp`) name a path the
 * origin covers (RFC 9728 §5.1), but the provider matches resource indicators exactly; this
 * rewrites such a value to the origin at /authorize and /token. Any other origin is left alone,
 * so it is still refused with invalid_target.
 */
export async function canonicalResourceRequest(request: Request, origin: string): Promise<Request> {
  const url = new URL(request.url);
  if (request.method === "GET" && url.pathname === "/authorize") {
    const resource = url.searchParams.get("resource");
    if (resource === null || !coveredBy(resource, origin)) return request;
    url.searchParams.set("resource", origin);
    return new Request(url.toString(), request);
  }
  const isForm = request.headers.get("Content-Type")?.startsWith("application/x-www-form-urlencoded") ?? false;
  if (request.method === "POST" && url.pathname === "/token" && isForm) {
    const form = new URLSearchParams(await request.clone().text());
    const resource = form.get("resource");
    if (resource === null || !coveredBy(resource, origin)) return request;
    form.set("resource", origin);
    return new Request(request, { body: form.toString() });
  }
  return request;
}

function coveredBy(resource: string, origin: string): boolean {
  try {
    const url = new URL(resource);
    return url.origin === origin && url.pathname !== "/" && url.search === "" && url.hash === "";
  } catch {
    return false;
  }
}
