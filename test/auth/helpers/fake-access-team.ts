import { testSigningKey } from "./test-signing-key";

/** A Cloudflare Access team domain: its certs endpoint, and assertions as Access would sign them. */
export async function fakeAccessTeam(teamDomain: string, aud: string) {
  const key = await testSigningKey("access-key-1");
  return {
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new Request(input, init).url;
      if (url === `${teamDomain}/cdn-cgi/access/certs`) return Response.json({ keys: [key.publicJwk], public_cert: { kid: key.kid } });
      return new Response("unknown", { status: 502 });
    }) satisfies typeof fetch,
    assertion(email: string, overrides: Record<string, unknown> = {}): Promise<string> {
      const now = Math.floor(Date.now() / 1000);
      return key.sign({ aud: [aud], email, sub: `sub-${email}`, iss: teamDomain, iat: now, nbf: now, exp: now + 600, type: "app", ...overrides });
    },
  };
}
