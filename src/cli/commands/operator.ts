// The operator commands (config, servers, groups, pins, sync, status, doctor, agents), registered
// as one family so the shared command registry needs a single line for them.
import type { Command } from "commander";
import type { CliIO } from "../context.js";
import { registerAgents } from "./agents.js";
import { registerDoctor } from "./doctor.js";
import { registerGroups } from "./groups.js";
import { registerInit } from "./init.js";
import { registerPins } from "./pins.js";
import { registerServers } from "./servers.js";
import { registerStatus } from "./status.js";
import { registerSync } from "./sync.js";

export function registerOperator(program: Command, io: CliIO): void {
  registerInit(program, io);
  registerServers(program, io);
  registerGroups(program, io);
  registerPins(program, io);
  registerStatus(program, io);
  registerSync(program, io);
  registerDoctor(program, io);
  registerAgents(program, io);
}
