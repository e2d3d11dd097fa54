/**
 * The team library's pages: `/teams` (my teams, a form to make one), `/teams/:team` (its
 * sessions, a search of them, its members, and for owners and admins an invite link to copy),
 * `/join/:token` (the team an invite names and a Join button) and `/teams/:team/audit`. Every
 * string is escaped here; every change is a POST carrying the CSRF field.
 */
import { escapeHtml } from "../escape.js";
import { oneLine, time } from "./format.js";
import { csrfField, renderLibraryPage } from "./layout.js";

/** A team as its member sees it. */
export interface TeamRow {
  id: string;
  name: string;
  role: "owner" | "admin" | "member";
}

const page = (title: string, csrfToken: string | undefined, body: string) =>
  renderLibraryPage({ title, section: "teams", csrfToken, signedIn: true }, body);

const teamHref = (id: string) => `/teams/${encodeURIComponent(id)}`;

/** `/teams`: the teams I am in, and a form to make one. */
export function renderTeamsPage(input: { teams: TeamRow[]; csrfToken?: string }): string {
  const rows = input.teams.length
    ? `<ul class="teams">${input.teams
        .map(
          (t) =>
            `<li data-team="${escapeHtml(t.id)}"><a href="${escapeHtml(teamHref(t.id))}">${escapeHtml(oneLine(t.name, 100))}</a> <span class="muted">${escapeHtml(t.role)}</span></li>`,
        )
        .join("")}</ul>`
    : `<p class="muted">You are in no team yet: make one, or open an invite link a colleague sent you.</p>`;
  return page(
    "Teams",
    input.csrfToken,
    `${rows}
<h2>New team</h2>
<form method="post" action="/teams" class="new-team">${csrfField(input.csrfToken)}<label>Name <input type="text" name="name" required maxlength="100"></label> <button type="submit">Make team</button></form>
<p class="muted">Sessions you put in a team are readable by its members, read-only, with credentials masked as on share pages.</p>`,
  );
}

/** A team session as the team page lists it. */
export interface TeamSessionRow {
  id: string;
  owner: string;
  title: string;
  cwd?: string;
  lastAt: string;
}

/** A hit of the team page's search. */
export interface TeamHitRow {
  id: string;
  owner: string;
  title: string;
  snippet: string;
}

/** Everything the team page shows. */
export interface TeamPageInput {
  team: TeamRow;
  sessions: TeamSessionRow[];
  members: Array<{ user: string; role: string; joinedAt: string }>;
  csrfToken?: string;
  /** An invite link just made (shown this once, to copy). */
  invite?: string;
  /** The search typed, and its hits. */
  query?: string;
  hits?: TeamHitRow[];
  next?: string;
}

const sessionHref = (team: string, owner: string, id: string) =>
  `${teamHref(team)}/sessions/${encodeURIComponent(`${owner}:${id}`)}`;

/** `/teams/:team`. */
export function renderTeamPage(input: TeamPageInput): string {
  const { team } = input;
  const admin = team.role === "owner" || team.role === "admin";
  const invite = input.invite
    ? `<section class="created" role="status"><h2>Invite link</h2><p>One use, for 7 days. It is shown here once:</p>
<p class="copy-line"><input type="text" readonly value="${escapeHtml(input.invite)}" aria-label="Invite link" id="invite-url"> <button type="button" data-copy="${escapeHtml(input.invite)}">Copy</button></p></section>`
    : "";
  const inviteForm = admin
    ? `<form method="post" action="${escapeHtml(`${teamHref(team.id)}/invites`)}" class="invite">${csrfField(input.csrfToken)}<label>Role <select name="role"><option value="member">member</option><option value="admin">admin</option></select></label> <button type="submit">Make an invite link</button></form>
<p><a href="${escapeHtml(`${teamHref(team.id)}/audit`)}">Audit log</a></p>`
    : "";
  const insights = `<p><a href="${escapeHtml(`/insights?team=${encodeURIComponent(team.id)}`)}">Insights</a>: the team's usage by model and project${admin ? " and member" : ""}</p>`;
  const search = `<form method="get" action="${escapeHtml(teamHref(team.id))}" class="team-search" role="search"><input type="search" name="q" value="${escapeHtml(input.query ?? "")}" aria-label="Search the team's sessions" maxlength="1000"> <button type="submit">Search</button></form>`;
  const hits =
    input.hits === undefined
      ? ""
      : input.hits.length
        ? `<ul class="hits">${input.hits
            .map(
              (h) =>
                `<li><a href="${escapeHtml(sessionHref(team.id, h.owner, h.id))}">${escapeHtml(oneLine(h.title, 100))}</a> <span class="muted">${escapeHtml(h.owner)}</span><br><span class="snippet">${escapeHtml(oneLine(h.snippet, 300))}</span></li>`,
            )
            .join("")}</ul>`
        : `<p class="muted">No team session matches.</p>`;
  const sessions = input.sessions.length
    ? `<table class="team-sessions"><thead><tr><th>Session</th><th>Owner</th><th>Last active</th></tr></thead><tbody>${input.sessions
        .map(
          (s) =>
            `<tr><td><a href="${escapeHtml(sessionHref(team.id, s.owner, s.id))}">${escapeHtml(oneLine(s.title, 100))}</a>${s.cwd ? `<br><span class="muted">${escapeHtml(oneLine(s.cwd, 100))}</span>` : ""}</td><td>${escapeHtml(s.owner)}</td><td>${time(s.lastAt)}</td></tr>`,
        )
        .join(
          "",
        )}</tbody></table>${input.next ? `<p class="more"><a rel="next" href="${escapeHtml(input.next)}">More sessions</a></p>` : ""}`
    : `<p class="muted">No session is in this team yet: put one in with <code>pisync team add</code>.</p>`;
  const members = `<h2>Members</h2><ul class="members">${input.members
    .map(
      (m) =>
        `<li>${escapeHtml(m.user)} <span class="muted">${escapeHtml(m.role)}, joined ${time(m.joinedAt)}</span></li>`,
    )
    .join("")}</ul>`;
  return page(
    team.name,
    input.csrfToken,
    `${invite}${search}${hits}<h2>Sessions</h2>${sessions}${insights}${members}${inviteForm}`,
  );
}

/** `/join/:token`: the team an invite names and a Join button. */
export function renderJoinPage(input: { token: string; team: { name: string }; role: string; csrfToken?: string }) {
  return page(
    `Join ${oneLine(input.team.name, 100)}`,
    input.csrfToken,
    `<p>You are invited to the team <strong>${escapeHtml(input.team.name)}</strong> as ${escapeHtml(input.role)}. Its members read the sessions put in it (credentials masked), and see yours once you put them in.</p>
<form method="post" action="${escapeHtml(`/join/${encodeURIComponent(input.token)}`)}" class="join">${csrfField(input.csrfToken)}<button type="submit">Join</button></form>`,
  );
}

/** `/teams/:team/audit`: the audit log, newest first. */
export function renderAuditPage(input: {
  team: TeamRow;
  events: Array<{ at: string; actor: string; action: string; target?: string }>;
  csrfToken?: string;
  next?: string;
}): string {
  const rows = input.events
    .map(
      (e) =>
        `<tr data-action="${escapeHtml(e.action)}"><td>${time(e.at)}</td><td>${escapeHtml(e.actor)}</td><td>${escapeHtml(e.action)}</td><td>${escapeHtml(e.target ?? "")}</td></tr>`,
    )
    .join("");
  return page(
    `${oneLine(input.team.name, 100)}: audit log`,
    input.csrfToken,
    `<p><a href="${escapeHtml(teamHref(input.team.id))}">Back to the team</a></p>
<table class="audit"><thead><tr><th>When</th><th>Who</th><th>What</th><th>Of</th></tr></thead><tbody>${rows}</tbody></table>${
      input.next ? `<p class="more"><a rel="next" href="${escapeHtml(input.next)}">Older events</a></p>` : ""
    }`,
  );
}
