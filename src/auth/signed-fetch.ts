// The fetch a remote server's transport uses: it adds the server's access token (only to that
// server's origin), refreshes it, and turns the server's auth answers into what the gateway can act
// on. A 401 gets one recovery (another process's token, a refresh, a new machine token) and one
// retry; when only a person can help the request fails with NeedsAuthError, whose message names
// the command to run. A 403 insufficient_scope asking for more than the token grants is recorded so
// the next sign-in asks for it (machine clients get a broader token at once). The transport, and
// the downstream layer above it, never see a token.
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { LockedError, type NeedsAuthError, type RemoteAuthSession } from "../downstream/types.js";
import type { ServerAuth } from "./server-auth.js";

export class SignedFetchSession implements RemoteAuthSession {
  private needs?: NeedsAuthError;
  private readonly origin: string;

  constructor(
    private readonly auth: ServerAuth,
    private readonly base: FetchLike,
    /** Set when the OAuth store cannot be opened (locked vault); only fatal if the server asks for a token. */
    private readonly storeProblem: () => Promise<string | undefined>,
  ) {
    this.origin = new URL(auth.url).origin;
  }

  takeNeedsAuth(): NeedsAuthError | undefined {
    const n = this.needs;
    this.needs = undefined;
    return n;
  }

  readonly fetch: FetchLike = async (input, init) => {
    const url = new URL(String(input));
    // The token belongs to this server only, whatever URL a response points the transport at.
    if (url.origin !== this.origin) return this.base(input, init);
    const token = await this.currentToken();
    const res = await this.send(input, init, token);
    if (res.status === 401) return this.unauthorized(res, input, init, token);
    if (res.status === 403) return this.forbidden(res, input, init);
    return res;
  };

  private async currentToken(): Promise<string | undefined> {
    if (this.auth.configured) return this.auth.accessToken();
    // Not configured for OAuth: sign-in starts only when the server asks, so a locked vault
    // must not break a server that never needed it.
    if (await this.storeProblem()) return undefined;
    return this.auth.accessToken();
  }

  private send(input: string | URL, init: RequestInit | undefined, token: string | undefined): Promise<Response> {
    const headers = new Headers(init?.headers);
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    return this.base(input, { ...init, headers });
  }

  private async unauthorized(res: Response, input: string | URL, init: RequestInit | undefined, token: string | undefined): Promise<Response> {
    const bearer = /^\s*bearer\b/i.test(res.headers.get("www-authenticate") ?? "");
    if (!bearer && !this.auth.configured) return res; // some other scheme: not ours to answer
    await res.body?.cancel().catch(() => undefined);
    const problem = await this.storeProblem();
    if (problem) throw new LockedError(`the server asks for sign-in, but its stored sign-in cannot be read: ${problem}`);
    if (token === undefined && !this.auth.machine) throw this.fail(this.auth.needsSignIn("no sign-in is stored"));
    const fresh = await this.auth.recover(token);
    if (fresh === undefined || fresh === token) {
      throw this.fail(this.auth.needsSignIn(this.auth.lastRefusal ?? "the server refused the stored access token"));
    }
    const again = await this.send(input, init, fresh);
    if (again.status === 401) {
      await again.body?.cancel().catch(() => undefined);
      throw this.fail(this.auth.needsSignIn("the server refused a freshly issued access token"));
    }
    if (again.status === 403) return this.forbidden(again, input, init);
    return again;
  }

  private async forbidden(res: Response, input: string | URL, init: RequestInit | undefined, retried = false): Promise<Response> {
    const { error, scope } = extractWWWAuthenticateParams(res);
    // Asking again for a scope the token already has would loop: the 403 stands.
    if (error !== "insufficient_scope" || retried || (await this.auth.covers(scope))) return res;
    await res.body?.cancel().catch(() => undefined);
    const fresh = await this.auth.stepUp(scope);
    if (fresh === undefined) throw this.fail(this.auth.needsScope(scope));
    const again = await this.send(input, init, fresh);
    return again.status === 403 ? this.forbidden(again, input, init, true) : again;
  }

  private fail(err: NeedsAuthError): NeedsAuthError {
    this.needs = err;
    return err;
  }
}
