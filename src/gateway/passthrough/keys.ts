// One downstream connection as a map key: the shared connection of a server, or a connection
// dedicated to one upstream session (`connection: per-session`, tagged with the session's id).

export function connKey(server: string, connection?: string): string {
  return connection === undefined ? server : `${server}\u0000${connection}`;
}

/** Whether the key names one of this session's dedicated connections. */
export function ownedBy(key: string, sessionId: string): boolean {
  return key.endsWith(`\u0000${sessionId}`);
}
