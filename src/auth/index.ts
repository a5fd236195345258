// OAuth for remote downstream servers: `mcphub auth login` (the authorization-code flow with PKCE
// and a loopback redirect, login.ts, loopback.ts, challenge.ts), the tokens a running gateway
// sends, refreshes and recovers (manager.ts, server-auth.ts, signed-fetch.ts, provider.ts), what
// the vault holds for each server (status.ts), and the exact sign-in command every surface shows
// (command.ts). Tokens live in the vault's OAuth store; nothing here is printed or logged.
export { loginCommand } from "./command.js";
export { DEFAULT_SIGN_IN_TIMEOUT_MS, SignInError, signIn, type SignInResult } from "./login.js";
export { OAuthManager } from "./manager.js";
export { authStatus, signOut, type AuthStatusEntry } from "./status.js";
