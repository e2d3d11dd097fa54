import * as z from "zod/mini";
import { Api, ApiError, Transient } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { configPath, Login, saveLogin } from "../config.js";
import { type Io, parse } from "./common.js";

const USAGE = "usage: pisync login --endpoint URL --token TOKEN";

/** Checks the endpoint and token against the server, then saves them (readable by you only). */
export async function login(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { endpoint: { type: "string" }, token: { type: "string" } },
    z.object({ endpoint: Login.shape.endpoint, token: Login.shape.token }),
    USAGE,
  );
  const candidate = { endpoint: args.endpoint.replace(/\/+$/, ""), token: args.token };
  try {
    await new Api(candidate, { attempts: 2 }).json("/v1/sessions?limit=1");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401)
      throw new CliError("the server refused this token", EXIT.auth);
    if (error instanceof ApiError || error instanceof Transient) {
      throw new CliError(`could not reach pisync at ${candidate.endpoint}: ${error.message}`);
    }
    throw error;
  }
  saveLogin(candidate, io.env);
  io.err(`logged in to ${candidate.endpoint}; saved in ${configPath(io.env)}\n`);
  return EXIT.ok;
}
