import { describe, expect, it } from "vitest";
import { signedInUser, type UserProps, vouchFor } from "../../src/auth/user-props";

describe("signedInUser", () => {
  const user: UserProps = { userId: "u-1", login: "alice", role: "member" };

  it("takes a user the auth layer vouched for as it is, without parsing it again", () => {
    const vouched = vouchFor({ ...user });
    expect(signedInUser(vouched)).toBe(vouched);
  });

  it("parses anything else: a look-alike copy of a vouched user is checked, not trusted", () => {
    const vouched = vouchFor({ ...user });
    const copy = { ...vouched, role: "owner" };
    expect(signedInUser(copy)).toBeUndefined();
    const valid = { ...vouched, extra: "dropped" };
    const parsed = signedInUser(valid);
    expect(parsed).toEqual(user);
    expect(parsed).not.toBe(valid);
  });

  it("refuses props that are no user at all", () => {
    for (const props of [undefined, null, "u-1", 7, [], {}, { userId: "", login: "x", role: "member" }]) expect(signedInUser(props)).toBeUndefined();
  });
});
