/**
 * What the routes are given: the use cases they call ({@link Services}) and the request limits.
 * A module of its own, below every route and `app.ts`, so that a route never imports the app that
 * mounts it.
 */
import {
  type Appender,
  type Blobs,
  type BrowserSessions,
  DEFAULT_APPEND_LIMITS,
  type Identities,
  type Insights,
  type Reader,
  type SessionPages,
  type ShareReading,
  type Teams,
  type Tokens,
  type Uploads,
} from "@pisync/core";
import type { BodyLimits } from "./body.js";
import type { PreviewRenderer } from "./preview/card.js";
import type { ShareWork } from "./share-work.js";

export interface AppLimits extends BodyLimits {
  /** A single large line uploaded outside the append request (pi keeps images inline). */
  maxUploadBytes: number;
  /** Lines per append. */
  maxLines: number;
}

/** Lambda takes 6 MB per request, and a binary body travels base64-encoded (4/3 larger). */
export const DEFAULT_LIMITS: AppLimits = {
  maxRequestBytes: 4 * 1024 * 1024,
  maxBodyBytes: 16 * 1024 * 1024,
  maxUploadBytes: 64 * 1024 * 1024,
  maxLines: DEFAULT_APPEND_LIMITS.maxLines,
};

/** The use cases the routes call (never the stores themselves), and the request limits. */
export interface Services {
  appender: Appender;
  reader: Reader;
  tokens: Tokens;
  /** Sign-in links and browser sessions. */
  browserSessions: BrowserSessions;
  /** See `AppDeps.publicUrl`. */
  publicUrl: string | undefined;
  uploads: Uploads;
  blobs: Blobs;
  /**
   * What a session view shows, for share links and for the owner's library alike: one instance,
   * so both keep their per-version work (facts, trees) in one place.
   */
  reading: ShareReading;
  /** A session's text a bounded page at a time, masked (agents: `/mcp`, `/v1/sessions/:id/page`). */
  pages: SessionPages;
  /** Usage reports over a user's sessions. */
  insights: Insights;
  /** The server's id and the caller's identity (`/v1/whoami`). */
  identities: Identities;
  /** The team library; absent when the stores keep no teams. */
  teams?: Teams;
  limits: AppLimits;
  clock: () => Date;
  work: ShareWork;
  /** See `AppDeps.preview`. */
  preview: PreviewRenderer;
}
