/**
 * The team library over HTTP: `/v1/teams/*`, `/v1/join/:token` and `PUT /v1/sessions/:id/team`.
 * Core's `Teams` holds every rule (who may, what a non-member sees); these only translate.
 */
import { type Teams, titleOf } from "@pisync/core";
import {
  ContextQuery,
  CreateInvite,
  CreateTeam,
  HEADERS,
  SetSessionTeam,
  TeamPageQuery,
  TeamPolicy,
} from "@pisync/protocol";
import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { markdownResponse } from "../markdown.js";
import type { Services } from "../services.js";
import { started, textStream } from "../stream.js";
import { parseJson, parseQuery } from "../validate.js";

/** A page's size: 1..100, default 50. */
function pageOf(c: Context) {
  const query = parseQuery(TeamPageQuery, c);
  const limit = Math.min(100, Math.max(1, query.limit ?? 50));
  return { limit, cursor: query.cursor };
}

/** `/v1/teams` and everything under it. */
export function teamRoutes(services: Services, teams: Teams) {
  const app = new Hono<AuthEnv>();
  const origin = (c: Context) => services.publicUrl ?? new URL(c.req.url).origin;

  app.post("/", async (c) => {
    const { name } = await parseJson(CreateTeam, c);
    return c.json(await teams.create(c.get("userId"), name), 201);
  });

  app.get("/", async (c) => c.json({ teams: await teams.list(c.get("userId")) }));

  app.post("/:team/invites", async (c) => {
    const { role } = await parseJson(CreateInvite, c);
    const { token, expiresAt } = await teams.invite(c.get("userId"), c.req.param("team"), role);
    c.header("Cache-Control", "no-store");
    return c.json({ url: `${origin(c)}/join/${token}`, expiresAt }, 201);
  });

  app.get("/:team/sessions", async (c) => {
    const page = await teams.sessions(c.get("userId"), c.req.param("team"), pageOf(c));
    return c.json({
      sessions: page.sessions.map((card) => ({
        id: card.sessionId,
        owner: card.owner,
        title: titleOf(card),
        ...(card.cwd ? { cwd: card.cwd } : {}),
        lastAt: card.lastAt,
        addedAt: card.addedAt,
        entries: card.entries,
        models: card.models,
      })),
      ...(page.cursor ? { cursor: page.cursor } : {}),
    });
  });

  app.get("/:team/sessions/:id/md", async (c) => {
    const { leaf } = parseQuery(ContextQuery, c);
    const teamId = c.req.param("team");
    const { share, head, owner } = await teams.view(c.get("userId"), teamId, c.req.param("id"));
    const doc = await services.reading.document(share, head, leaf);
    const notes = [`a session of ${owner}, shared with the team`];
    return markdownResponse(c, doc, notes, true);
  });

  /**
   * The team session's JSONL, whole and masked as a share link's `/raw` (the bytes
   * `pisync pull --team` makes a fork of); streamed.
   */
  app.get("/:team/sessions/:id/raw", async (c) => {
    const { share, head, owner } = await teams.view(c.get("userId"), c.req.param("team"), c.req.param("id"));
    const pieces = await started(services.reading.branchFile(share, head));
    c.header("Content-Type", "application/x-ndjson; charset=utf-8");
    c.header(HEADERS.owner, owner);
    c.header("Cache-Control", "no-store");
    c.header("Content-Disposition", `attachment; filename="${head.sessionId}.jsonl"`);
    return c.body(textStream(pieces));
  });

  app.get("/:team/members", async (c) => {
    const members = await teams.members(c.get("userId"), c.req.param("team"));
    return c.json({ members: members.map((m) => ({ user: m.userId, role: m.role, joinedAt: m.joinedAt })) });
  });

  app.delete("/:team/members/:user", async (c) => {
    await teams.removeMember(c.get("userId"), c.req.param("team"), c.req.param("user"));
    return c.body(null, 204);
  });

  app.put("/:team/policy", async (c) => {
    const policy = await parseJson(TeamPolicy, c);
    return c.json(await teams.setPolicy(c.get("userId"), c.req.param("team"), policy));
  });

  app.get("/:team/audit", async (c) => {
    const page = await teams.auditLog(c.get("userId"), c.req.param("team"), pageOf(c));
    return c.json({
      events: page.events.map(({ teamId: _team, ...event }) => event),
      ...(page.cursor ? { cursor: page.cursor } : {}),
    });
  });
  return app;
}

/** `POST /v1/join/:token`. */
export function joinRoutes(teams: Teams) {
  const app = new Hono<AuthEnv>();
  app.post("/:token", async (c) => c.json(await teams.join(c.get("userId"), c.req.param("token"))));
  return app;
}

/** `PUT /v1/sessions/:id/team`. */
export function sessionTeamRoutes(teams: Teams) {
  const app = new Hono<AuthEnv>();
  app.put("/:id/team", async (c) => {
    const { team } = await parseJson(SetSessionTeam, c);
    const id = c.req.param("id");
    const result = await teams.setSessionTeam(c.get("userId"), id, team);
    return c.json({ id, team: result.team ? { id: result.team.id, name: result.team.name } : null });
  });
  return app;
}

/** After `DELETE /v1/sessions/:id` succeeds, the session leaves its team (see `Teams.sessionDeleted`). */
export function leaveTeamOnDelete(teams: Teams): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    await next();
    if (c.req.method !== "DELETE" || c.res.status >= 300) return;
    await teams.sessionDeleted(c.get("userId"), c.req.param("id") as string);
  };
}
