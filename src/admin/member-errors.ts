import { AdminApiError } from "./admin-errors";

/** No member with that user id, login or email has signed in (or the login is ambiguous). */
export class MemberNotFoundError extends AdminApiError {
  readonly kind = "member-not-found";
  readonly status = 404;
  readonly fix = "List members with GET /admin/api/members (npx slipsnisse members) and use the user id it shows.";
  constructor(readonly user: string) {
    super(`No member "${user}" has signed in to this tenant (or that login belongs to several).`);
  }
}

/** Grants live with the OAuth provider; without a working sign-in configuration there are none to revoke. */
export class GrantsUnavailableError extends AdminApiError {
  readonly kind = "grants-unavailable";
  readonly status = 409;
  constructor(
    readonly detail: string,
    readonly fix: string,
  ) {
    super(`The OAuth grants cannot be read: ${detail}`);
  }
}

/** A member asked for a thread or run that is not in their session of that skill. */
export class OwnEntryNotFoundError extends AdminApiError {
  readonly kind = "own-entry-not-found";
  readonly status = 404;
  readonly fix: string;
  constructor(
    readonly what: "thread" | "run",
    readonly id: string,
    readonly skill: string,
  ) {
    super(`You have no ${what} "${id}" in skill "${skill}" (or it is still running).`);
    this.fix = `List yours with GET /me/api/skills/${skill}/${what}s.`;
  }
}

/** No service client with that client id (GET /admin/api/service-clients lists them). */
export class ServiceClientNotFoundError extends AdminApiError {
  readonly kind = "service-client-not-found";
  readonly status = 404;
  readonly fix = "List service clients with GET /admin/api/service-clients (npx slipsnisse service-clients) and use the client id it shows.";
  constructor(readonly clientId: string) {
    super(`This tenant has no service client "${clientId}".`);
  }
}
