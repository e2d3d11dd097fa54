/**
 * The metadata port composed of its families: an adapter builds one store per port over its one
 * database (the same table, the same SQLite file) and this class answers each method with its
 * family's store, so that callers keep one {@link MetaStore} while each family stays small.
 */
import type { MetaStore } from "./ports.js";
import type { BrowserSessionRecord, BrowserSessionStore } from "./ports-browser-sessions.js";
import type { CardPage, CardPageRequest, CardStore, SessionCard } from "./ports-cards.js";
import type { TokenRecord, TokenStore } from "./ports-credentials.js";
import type { Commit, GenerationState, IndexPage, SessionHead, SessionStore } from "./ports-sessions.js";
import type { ShareRecord, ShareStore } from "./ports-shares.js";
import type { DeviceCodeRecord, DeviceCodeStatus, LoginLinkRecord, SignInStore } from "./ports-sign-in.js";
import type { UsageInRange, UsageStore } from "./ports-usage.js";

type Page = { limit: number; cursor?: string };

/** A {@link MetaStore} whose methods are its family stores' (a subclass sets them in its constructor). */
export abstract class ComposedMetaStore implements MetaStore {
  protected abstract readonly sessions: SessionStore;
  protected abstract readonly cards: CardStore;
  protected abstract readonly usage: UsageStore;
  protected abstract readonly tokens: TokenStore;
  protected abstract readonly signIn: SignInStore;
  protected abstract readonly browserSessions: BrowserSessionStore;
  protected abstract readonly shares: ShareStore;

  users(): Promise<string[]> {
    return this.sessions.users();
  }
  getHead(userId: string, sessionId: string): Promise<SessionHead | undefined> {
    return this.sessions.getHead(userId, sessionId);
  }
  commit(commit: Commit): Promise<void> {
    return this.sessions.commit(commit);
  }
  listHeads(userId: string, options: Page): Promise<{ heads: SessionHead[]; cursor?: string }> {
    return this.sessions.listHeads(userId, options);
  }
  getPages(userId: string, sessionId: string, generation: number, from?: number): Promise<IndexPage[]> {
    return this.sessions.getPages(userId, sessionId, generation, from);
  }
  getArchived(userId: string, sessionId: string): Promise<GenerationState[]> {
    return this.sessions.getArchived(userId, sessionId);
  }
  deleteSession(userId: string, sessionId: string, revokedAt: string): Promise<void> {
    return this.sessions.deleteSession(userId, sessionId, revokedAt);
  }
  serverId(candidate: string): Promise<string> {
    return this.sessions.serverId(candidate);
  }

  listCards(userId: string): Promise<SessionCard[]> {
    return this.cards.listCards(userId);
  }
  listCardPage(userId: string, request: CardPageRequest): Promise<CardPage> {
    return this.cards.listCardPage(userId, request);
  }
  getCards(userId: string, sessionIds: readonly string[]): Promise<SessionCard[]> {
    return this.cards.getCards(userId, sessionIds);
  }
  fillCardList(userId: string, options?: { check?: boolean }): Promise<number> {
    return this.cards.fillCardList(userId, options);
  }

  listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    return this.usage.listUsage(userId, range);
  }

  putToken(token: TokenRecord): Promise<void> {
    return this.tokens.putToken(token);
  }
  findToken(hash: string): Promise<TokenRecord | undefined> {
    return this.tokens.findToken(hash);
  }
  listTokens(userId: string): Promise<TokenRecord[]> {
    return this.tokens.listTokens(userId);
  }
  listTokenPage(userId: string, page: Page): Promise<{ tokens: TokenRecord[]; cursor?: string }> {
    return this.tokens.listTokenPage(userId, page);
  }
  deleteToken(userId: string, id: string): Promise<boolean> {
    return this.tokens.deleteToken(userId, id);
  }
  renameToken(userId: string, id: string, name: string): Promise<boolean> {
    return this.tokens.renameToken(userId, id, name);
  }
  touchToken(hash: string, lastUsedAt: string): Promise<void> {
    return this.tokens.touchToken(hash, lastUsedAt);
  }

  putLoginLink(link: LoginLinkRecord): Promise<void> {
    return this.signIn.putLoginLink(link);
  }
  consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined> {
    return this.signIn.consumeLoginLink(hash);
  }
  putDeviceCode(record: DeviceCodeRecord): Promise<boolean> {
    return this.signIn.putDeviceCode(record);
  }
  getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined> {
    return this.signIn.getDeviceCode(userCode);
  }
  updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean> {
    return this.signIn.updateDeviceCode(record, expected);
  }
  consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined> {
    return this.signIn.consumeDeviceCode(userCode, expected);
  }

  putBrowserSession(session: BrowserSessionRecord): Promise<void> {
    return this.browserSessions.putBrowserSession(session);
  }
  findBrowserSession(hash: string): Promise<BrowserSessionRecord | undefined> {
    return this.browserSessions.findBrowserSession(hash);
  }
  listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]> {
    return this.browserSessions.listBrowserSessions(userId);
  }
  listBrowserSessionPage(userId: string, page: Page): Promise<{ sessions: BrowserSessionRecord[]; cursor?: string }> {
    return this.browserSessions.listBrowserSessionPage(userId, page);
  }
  touchBrowserSession(hash: string, lastUsedAt: string): Promise<void> {
    return this.browserSessions.touchBrowserSession(hash, lastUsedAt);
  }
  deleteBrowserSession(userId: string, id: string): Promise<boolean> {
    return this.browserSessions.deleteBrowserSession(userId, id);
  }
  deleteBrowserSessions(userId: string): Promise<number> {
    return this.browserSessions.deleteBrowserSessions(userId);
  }

  putShare(share: ShareRecord): Promise<void> {
    return this.shares.putShare(share);
  }
  getShare(id: string): Promise<ShareRecord | undefined> {
    return this.shares.getShare(id);
  }
  listShares(userId: string): Promise<ShareRecord[]> {
    return this.shares.listShares(userId);
  }
  listSharePage(userId: string, page: Page): Promise<{ shares: ShareRecord[]; cursor?: string }> {
    return this.shares.listSharePage(userId, page);
  }
  recordShareView(id: string, at: string): Promise<void> {
    return this.shares.recordShareView(id, at);
  }
  recordShareDownload(id: string): Promise<void> {
    return this.shares.recordShareDownload(id);
  }
}
