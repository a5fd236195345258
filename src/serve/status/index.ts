// The daemon's status page and its API, entered from the HTTP listener after its Host and Origin
// checks: the routes (routes.ts), the status document (model.ts) with the servers' timeline
// (timeline.ts), live pushes to open pages (events.ts), the operator's buttons (actions.ts), page
// sign-in (login.ts: one-time links from `mcphub open`; sessions.ts: cookies and CSRF) and the
// self-contained page itself (page.ts). This module is its entry point.
export { createStatusRoutes, type StatusRoutes, type StatusRoutesOptions } from "./routes.js";
export { createLoginSecret, LOGIN_LINK_TTL_MS, redeemLoginSecret, writeLaunchFile } from "./login.js";
export { buildStatus, type StatusDocument, type Viewer } from "./model.js";
