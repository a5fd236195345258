// The registry of CLI commands: one module per command (or family), each exporting `register`.
// Add a command by adding its module here.
import type { Command } from "commander";
import type { CliIO } from "../context.js";
import { registerOperator } from "./operator.js";
import { registerServe } from "./serve.js";
import { registerStats } from "./stats.js";
import { registerToken } from "./token.js";
import { registerVault } from "./vault.js";

export type RegisterCommand = (program: Command, io: CliIO) => void;

export const COMMANDS: RegisterCommand[] = [registerOperator, registerServe, registerVault, registerStats, registerToken];
