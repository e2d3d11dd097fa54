/**
 * Who a request runs as, and which server answers it: the account, the device (its token),
 * and the id of the data this server holds. A client keys what it confirmed by the server id and
 * the account, never by the address: a server started afresh at the same address (its data
 * gone) has another id, so nothing confirmed there before counts.
 */
import { randomBytes } from "node:crypto";
import type { SessionStore, TokenStore } from "@pisync/store";

/** `GET /v1/whoami`. */
export interface Identity {
  user: string;
  device: { id: string; name: string };
  server: { id: string };
}

/** The server's id (made once, kept in the store) and the caller's identity. */
export class Identities {
  private id: Promise<string> | undefined;

  constructor(private readonly meta: SessionStore & TokenStore) {}

  /** The id of this server's data: read (or made, the first time ever) once per process. */
  serverId(): Promise<string> {
    this.id ??= this.meta.serverId(`srv_${randomBytes(12).toString("base64url")}`).catch((error: unknown) => {
      this.id = undefined; // a failed read is asked again next time
      throw error;
    });
    return this.id;
  }

  /** The identity of a request authenticated with the token `tokenId` of `userId`. */
  async whoami(userId: string, tokenId: string): Promise<Identity> {
    const [serverId, tokens] = await Promise.all([this.serverId(), this.meta.listTokens(userId)]);
    const name = tokens.find((t) => t.id === tokenId)?.name ?? "";
    return { user: userId, device: { id: tokenId, name }, server: { id: serverId } };
  }
}
