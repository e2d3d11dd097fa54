/**
 * The team library in the browser: `/teams`, `/teams/:team` (sessions, search, members, invite
 * link), `/teams/:team/audit`, `/join/:token`, and a team session in the share viewer
 * (`/teams/:team/sessions/:id` with the viewer's `entries`, `tree`, `find` and `state`), masked
 * as share pages are. Behind {@link signedIn}; the rules are core's `Teams`.
 */
import { BadRequest, NotFound, type Teams, titleOf } from "@pisync/core";
import { INVITE_TOKEN, SharePageQuery, TreeFindQuery } from "@pisync/protocol";
import { parseQuery as parseSearch, QueryError } from "@pisync/search";
import type { Context } from "hono";
import { compress } from "hono/compress";
import { Hono } from "hono/quick";
import * as z from "zod/mini";
import { LIBRARY_SECURITY_HEADERS } from "../html.js";
import { type LibraryEnv, publicOrigin, signedIn } from "../library-auth.js";
import { libraryPages } from "../library-pages.js";
import type { Services } from "../services.js";
import { parseQuery } from "../validate.js";
import { loadViewer, viewerLoaded } from "../viewer.js";
import type { SearchDeps } from "./search.js";

const PAGE = 50;
const TeamQuery = z.object({
  q: z.optional(z.string().check(z.maxLength(1000))),
  cursor: z.optional(z.string().check(z.maxLength(2000))),
});
const NameForm = z.object({ name: z.string().check(z.minLength(1), z.maxLength(100)) });
const InviteForm = z.object({ role: z.optional(z.enum(["member", "admin"])) });

/** A form's fields, checked (a bad one is a 400). */
async function form<T extends z.ZodMiniType>(schema: T, c: Context): Promise<z.infer<T>> {
  const body = await c.req.parseBody();
  const result = schema.safeParse(Object.fromEntries(Object.entries(body).filter(([k]) => k !== "csrf")));
  if (!result.success) throw new BadRequest("the form's fields are missing or not valid", "bad_request");
  return result.data;
}

/** The team pages and forms. */
export function teamPageRoutes(services: Services, teams: Teams, search?: SearchDeps) {
  const app = new Hono<LibraryEnv>();
  for (const path of ["/teams", "/teams/*", "/join/*"]) {
    app.use(path, async (c, next) => {
      await next();
      for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
    });
    app.use(path, signedIn(services));
  }
  app.use("/teams/:team/sessions/*", viewerLoaded);
  const user = (c: Context<LibraryEnv>) => c.get("userId");

  app.get("/teams", async (c) => {
    const list = await teams.list(user(c));
    return c.html((await libraryPages()).renderTeamsPage({ teams: list, csrfToken: c.get("csrfToken") }));
  });
  app.post("/teams", async (c) => {
    const { name } = await form(NameForm, c);
    const made = await teams.create(user(c), name);
    return c.redirect(`/teams/${encodeURIComponent(made.id)}`, 303);
  });

  /** The team page, with an invite link just made when there is one. */
  const teamPage = async (c: Context<LibraryEnv>, invite?: string) => {
    const teamId = c.req.param("team") as string;
    const team = await teams.get(user(c), teamId);
    const { q, cursor } = parseQuery(TeamQuery, c);
    const [page, members] = await Promise.all([
      teams.sessions(user(c), teamId, { limit: PAGE, cursor }),
      teams.members(user(c), teamId),
    ]);
    let hits: Array<{ id: string; owner: string; title: string; snippet: string }> | undefined;
    if (q && search?.teams) {
      try {
        const found = await search.teams.search(teamId, parseSearch(q, services.clock().getTime()), { limit: 20 });
        const { maskText } = await loadViewer();
        hits = found.sessions.map((s) => ({
          id: s.sessionId,
          owner: s.owner,
          title: s.name ? maskText(s.name).text : s.sessionId,
          // Masked as the team's Markdown and search answers are.
          snippet: maskText((s.entries[0]?.snippet ?? []).map((p) => p.text).join("")).text,
        }));
      } catch (error) {
        if (!(error instanceof QueryError)) throw error;
        hits = [];
      }
    }
    c.header("Cache-Control", "no-store");
    return c.html(
      (await libraryPages()).renderTeamPage({
        team: { id: team.id, name: team.name, role: team.role },
        sessions: page.sessions.map((s) => ({
          id: s.sessionId,
          owner: s.owner,
          title: titleOf(s),
          cwd: s.cwd,
          lastAt: s.lastAt,
        })),
        members: members.map((m) => ({ user: m.userId, role: m.role, joinedAt: m.joinedAt })),
        csrfToken: c.get("csrfToken"),
        invite,
        query: q,
        hits,
        next: page.cursor
          ? `/teams/${encodeURIComponent(teamId)}?cursor=${encodeURIComponent(page.cursor)}`
          : undefined,
      }),
    );
  };
  app.get("/teams/:team", (c) => teamPage(c));
  app.post("/teams/:team/invites", async (c) => {
    const { role } = await form(InviteForm, c);
    const { token } = await teams.invite(user(c), c.req.param("team"), role);
    // Answered with the page itself: the link (a secret) never sits in an address or history.
    return teamPage(c, `${publicOrigin(c, services.publicUrl)}/join/${token}`);
  });
  app.get("/teams/:team/audit", async (c) => {
    const teamId = c.req.param("team");
    const { cursor } = parseQuery(TeamQuery, c);
    const log = await teams.auditLog(user(c), teamId, { limit: PAGE, cursor });
    const team = await teams.get(user(c), teamId);
    return c.html(
      (await libraryPages()).renderAuditPage({
        team: { id: team.id, name: team.name, role: team.role },
        events: log.events,
        csrfToken: c.get("csrfToken"),
        next: log.cursor
          ? `/teams/${encodeURIComponent(teamId)}/audit?cursor=${encodeURIComponent(log.cursor)}`
          : undefined,
      }),
    );
  });

  app.get("/join/:token", async (c) => {
    const token = c.req.param("token");
    if (!INVITE_TOKEN.test(token)) throw new NotFound("no such invite");
    const invitation = await teams.invitation(token);
    c.header("Cache-Control", "no-store");
    c.header("Referrer-Policy", "no-referrer");
    return c.html(
      (await libraryPages()).renderJoinPage({
        token,
        team: invitation,
        role: invitation.role,
        csrfToken: c.get("csrfToken"),
      }),
    );
  });
  app.post("/join/:token", async (c) => {
    const { team } = await teams.join(user(c), c.req.param("token"));
    return c.redirect(`/teams/${encodeURIComponent(team.id)}`, 303);
  });

  // A team session in the share viewer: the page and what its script asks for, under its base.
  const pageQuery = (c: Context) => {
    const q = parseQuery(SharePageQuery, c);
    return { leaf: q.leaf ?? q.leafId, target: q.target ?? q.targetId, before: q.before, from: q.from, after: q.after };
  };
  const opened = (c: Context<LibraryEnv>) =>
    teams.view(user(c), c.req.param("team") as string, c.req.param("id") as string);
  app.get("/teams/:team/sessions/:id", compress(), async (c) => {
    const { share, head, owner } = await opened(c);
    const base = `/teams/${encodeURIComponent(c.req.param("team"))}/sessions/${encodeURIComponent(c.req.param("id"))}`;
    const view = await services.reading.page(share, head, base, pageQuery(c));
    view.notes = [`${owner}'s session, shared with the team: read-only, credentials masked`];
    return c.html(await services.work.renderPage(view));
  });
  app.get("/teams/:team/sessions/:id/entries", compress(), async (c) => {
    const { share, head } = await opened(c);
    return c.html(await services.work.renderEntries(await services.reading.window(share, head, pageQuery(c))));
  });
  app.get("/teams/:team/sessions/:id/tree", compress(), async (c) => {
    const { share, head } = await opened(c);
    return c.json(await services.reading.tree(share, head, pageQuery(c).leaf));
  });
  app.get("/teams/:team/sessions/:id/find", async (c) => {
    const { q, from } = parseQuery(TreeFindQuery, c);
    const { share, head } = await opened(c);
    return c.json(await services.reading.find(share, head, q, from));
  });
  app.get("/teams/:team/sessions/:id/state", async (c) => {
    const { share, head } = await opened(c);
    return c.json(await services.reading.state(share, head));
  });
  return app;
}
