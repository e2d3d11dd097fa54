/**
 * The sign-in port: one-time sign-in links and device codes (RFC 8628), each consumed atomically.
 * Errors follow the contract in `ports.ts`.
 */

/** A one-time sign-in link, stored as a hash only; redeeming it removes it. */
export interface LoginLinkRecord {
  /** SHA-256 of the link's secret, hex. */
  hash: string;
  userId: string;
  /** The same-origin path the browser goes to once signed in. */
  next: string;
  createdAt: string;
  /** After this instant the link signs nobody in (the store may drop it any time after). */
  expiresAt: string;
}

/** Where a device-code sign-in stands: waiting for its person, or decided by them. */
export type DeviceCodeStatus = "pending" | "approved" | "denied";

/**
 * A machine waiting to be signed in from a browser (RFC 8628's device authorization): the
 * person types `userCode` on the library's page; the machine polls with its device code, of
 * which only the SHA-256 is kept. No token exists until the approved code is consumed.
 */
export interface DeviceCodeRecord {
  /** The code a person types, without its dash (8 letters): the record's key. */
  userCode: string;
  /** SHA-256 of the device code (the polling machine's secret), hex. */
  deviceHash: string;
  /** What the token will be called: the machine's host name. */
  name: string;
  createdAt: string;
  /** After this instant the code signs nothing in (the store may drop it any time after). */
  expiresAt: string;
  /** Seconds a poll waits after the previous one (raised by each poll that came too soon). */
  interval: number;
  lastPolledAt?: string;
  status: DeviceCodeStatus;
  /** Who approved or denied it. */
  userId?: string;
}

/** Sign-in links and device codes. */
export interface SignInStore {
  /** Stores a sign-in link's record (its hash, never the secret). */
  putLoginLink(link: LoginLinkRecord): Promise<void>;
  /**
   * Removes the link whose secret hashes to `hash` and returns it, in one atomic step: of any
   * number of concurrent calls for one link, exactly one gets the record (expired or not; the
   * caller checks `expiresAt`), the others `undefined`.
   */
  consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined>;

  /**
   * Stores a new device code; false (nothing written) when a code with that `userCode` exists
   * and has not expired.
   */
  putDeviceCode(record: DeviceCodeRecord): Promise<boolean>;
  /** The device code with this `userCode` (expired or not: the caller checks); `undefined` when none is. */
  getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined>;
  /**
   * Replaces the device code `record.userCode` with `record` if it exists and its stored status
   * is `expected`, in one atomic step; @returns whether it did.
   */
  updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean>;
  /**
   * Removes the device code `userCode` if its stored status is `expected` and returns it, in one
   * atomic step: of any number of concurrent calls exactly one gets the record.
   */
  consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined>;
}
