// A stdio server as a child process: what is spawned on each platform (spawn-plan.ts), the
// child's env and working directory (child-env.ts), our client transport with a process group
// of its own and an immediate close on exit (transport.ts), and the bounded stderr tail
// (stderr-tail.ts). session.ts opens a connection through it.
export { findCommand, planSpawn } from "./spawn-plan.js";
export { ProcessGroupStdioTransport } from "./transport.js";
