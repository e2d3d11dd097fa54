/**
 * `npm run bench:bundle`'s variant (i), pisync's append alone: the smallest app that answers the
 * append as the function does (bearer auth, the session routes, the search mark in the commit's
 * transaction) on the function's stores, with one shared DynamoDB client; no other route and no
 * share, library or search code. Bundled with the shipped options, (i) / (g) is what the
 * append's own code (Hono, validation, core's ingest) costs over the SDK at a cold start, and
 * (a) / (i) what the rest of the app adds.
 */
import { Appender, Reader, Tokens } from "@pisync/core";
import { commitMark } from "@pisync/search/aws/marks";
import type { Commit } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { handle, type LambdaContext, type LambdaEvent } from "hono/aws-lambda";
import { Hono } from "hono/quick";
import { type AuthEnv, bearerAuth } from "../../../functions/api/src/auth.js";
import { lambdaConfig } from "../../../functions/api/src/config.js";
import { onError } from "../../../functions/api/src/errors.js";
import { sessionRoutes } from "../../../functions/api/src/routes/sessions.js";
import { DEFAULT_LIMITS, type Services } from "../../../functions/api/src/services.js";

let made: ReturnType<typeof handle> | undefined;

/** The app, once per process (as the function's `init`). */
export function init() {
  if (made) return made;
  const config = lambdaConfig();
  const connection = { ...config.connection, shared: {} };
  // As the function: each commit carries its session's search mark.
  const commitItems = (commit: Commit) => [commitMark(commit)];
  const stores = awsStores({ ...connection, bucket: config.bucket, table: config.table, commitItems });
  const clock = () => new Date();
  // The services the session routes' append uses; the others are never reached by it.
  const services = {
    appender: new Appender(stores, clock, { maxLines: DEFAULT_LIMITS.maxLines }),
    reader: new Reader(stores),
    tokens: new Tokens(stores.meta, clock),
    limits: DEFAULT_LIMITS,
    clock,
  } as Partial<Services> as Services;
  const app = new Hono<AuthEnv>();
  app.onError((error, c) => onError(error, c));
  app.use("/v1/*", bearerAuth(services.tokens));
  app.route("/v1/sessions", sessionRoutes(services));
  made = handle(app);
  return made;
}

/** The Lambda handler. */
export const handler = (event: LambdaEvent, context: LambdaContext) => init()(event, context);
