/** Header names and encodings of the append protocol (tus's offset semantics). */

/** Request and answer headers the API reads or writes beyond plain HTTP's. */
export const HEADERS = {
  /** Committed bytes (answers) and where an append starts (requests). */
  uploadOffset: "Upload-Offset",
  /** A large line uploaded beforehand: the append's body is empty. */
  upload: "Pisync-Upload",
  /** Hex SHA-256 of a `pisync-deflate-dict` body after decompression. */
  bodySha256: "Pisync-Body-SHA256",
  /** The owner of the team session an answer holds (a team session's `/raw`). */
  owner: "Pisync-Owner",
} as const;

/**
 * The encoding that decompresses with the committed bytes as dictionary: raw deflate whose
 * preset dictionary is the {@link DICT_BYTES} of committed bytes just before `Upload-Offset`.
 */
export const DICT_ENCODING = "pisync-deflate-dict";

/** How much of the committed bytes the dictionary holds. */
export const DICT_BYTES = 32 * 1024;
