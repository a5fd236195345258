// What one agent's sessions advertise, as pure functions of config and catalogue: the agent's
// scope (scope.ts), its pins (pins.ts), the tools listed directly and in what exact form under the
// schema budget (advertise.ts), public names of published items (mounts.ts), and the lazy-mode
// instructions (instructions.ts). This module is its entry point.
export { selectAdvertised, type BudgetReport } from "./advertise.js";
export { buildInstructions } from "./instructions.js";
export { planMounts, type MountInput, type MountKind, type MountPlan } from "./mounts.js";
export { effectivePins, pinMatches } from "./pins.js";
export { Scope } from "./scope.js";
