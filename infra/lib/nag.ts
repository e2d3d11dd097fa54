/**
 * cdk-nag AwsSolutions findings this stack accepts, each with its reason. Everything else
 * the checks report fails synthesis.
 */
import { PREFIXES } from "@pisync/store";
import { type Stack, Validations } from "aws-cdk-lib";

/** The finding for the object ARNs under one of the storage layout's prefixes. */
const objectsUnder = (prefix: string) => `AwsSolutions::AwsSolutions-IAM5[Resource::<Sessions8896A56D.Arn>/${prefix}*]`;

const ACKNOWLEDGED: { id: string; reason: string }[] = [
  {
    id: "AwsSolutions::AwsSolutions-S1",
    reason:
      "The bucket is private, written and read only by the API function, whose every request is logged " +
      "(CloudWatch, one month); server access logs would add a second bucket and a log object per request. " +
      "Enable CloudTrail S3 data events where an audit trail of object access is required.",
  },
  {
    id: "AwsSolutions::AwsSolutions-SMG4",
    reason:
      "The share-signing key is rotated by hand: share tokens carry a key id so a new key can be added while " +
      "live links signed by the old one keep working until they expire; automatic rotation would revoke them all.",
  },
  {
    id: objectsUnder(PREFIXES.sessions),
    reason: "Object ARNs of session segments: the function reads, writes and deletes only under sessions/, by design.",
  },
  {
    id: objectsUnder(PREFIXES.uploads),
    reason: "Object ARNs of large-line uploads: the function reads, writes and deletes only under uploads/.",
  },
  {
    id: objectsUnder(PREFIXES.blobs),
    reason:
      "Object ARNs of content-addressed blobs (oh-my-pi's images): the function reads and writes only under blobs/.",
  },
  {
    id: objectsUnder(PREFIXES.search),
    reason:
      "Object ARNs of users' search index files (derived from the sessions): the function reads, writes and deletes only under search/.",
  },
  {
    id: objectsUnder(PREFIXES.indexes),
    reason:
      "Object ARNs of sessions' persisted tree indexes (derived from the index pages): the function reads, writes and deletes only under indexes/.",
  },
  {
    id: "AwsSolutions::AwsSolutions-L1",
    reason:
      "Node.js 22 is the runtime pisync is built and tested for (esbuild target node22); moving runtimes is a tested change.",
  },
];

export function acknowledgeNagFindings(stack: Stack): void {
  for (const finding of ACKNOWLEDGED) Validations.of(stack).acknowledge(finding);
}
