/** The shape of a tree's node in the owner's API: below both the views that list them and the bounds that cut them. */

/** One entry of a session's tree as `GET /v1/sessions/:id/tree` lists it. */
export interface TreeNode {
  id: string;
  parentId: string | null;
  type?: string;
  role?: string;
  timestamp?: string;
  label?: string;
  preview?: string;
}
