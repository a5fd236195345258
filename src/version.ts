// Kept in step with package.json by hand; reported to downstreams as the client version.
export const VERSION = "0.1.0";
