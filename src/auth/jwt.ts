// Reads the claims of an ID token or a JWT access token to say who signed in (`auth status`). The
// signature is not checked: the result is a display label, never used for an access decision.

export function accountFromTokens(tokens: { id_token?: string; access_token: string }): string | undefined {
  for (const jwt of [tokens.id_token, tokens.access_token]) {
    const claims = jwt ? decodeClaims(jwt) : undefined;
    if (!claims) continue;
    for (const key of ["email", "preferred_username", "name", "sub"]) {
      const v = claims[key];
      if (typeof v === "string" && v.trim() !== "" && v.length <= 200) return v;
    }
  }
  return undefined;
}

function decodeClaims(jwt: string): Record<string, unknown> | undefined {
  const parts = jwt.split(".");
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
