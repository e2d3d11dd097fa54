/**
 * One pass over a text for the keywords of many rules: which rules may find something in it.
 * (A rule's keywords are literal strings every one of its matches holds.)
 */

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** The keywords of a list of rules, looked for together. */
export class Keywords {
  private readonly pattern: RegExp;
  /** By keyword: the lists it, or a keyword inside it, belongs to. */
  private readonly owners = new Map<string, number[]>();
  private readonly lists: number;

  constructor(lists: readonly (readonly string[])[]) {
    this.lists = lists.length;
    const direct = new Map<string, number[]>();
    lists.forEach((list, i) => {
      for (const keyword of list) direct.set(keyword, [...(direct.get(keyword) ?? []), i]);
    });
    for (const keyword of direct.keys()) {
      const owners = new Set<number>();
      for (const [inner, of] of direct) if (keyword.includes(inner)) for (const i of of) owners.add(i);
      this.owners.set(keyword, [...owners]);
    }
    // Longest first: where keywords overlap, the longer one is found (and counts for those inside it).
    const all = [...direct.keys()].sort((a, b) => b.length - a.length);
    this.pattern = new RegExp(all.map(escapeRegExp).join("|"), "g");
  }

  /** For each list, whether `text` holds one of its keywords. */
  present(text: string): boolean[] {
    const found = new Array<boolean>(this.lists).fill(false);
    const seen = new Set<string>();
    this.pattern.lastIndex = 0;
    for (let m = this.pattern.exec(text); m !== null; m = this.pattern.exec(text)) {
      this.pattern.lastIndex = m.index + 1; // keywords may overlap
      if (seen.has(m[0])) continue;
      seen.add(m[0]);
      for (const i of this.owners.get(m[0]) ?? []) found[i] = true;
      if (seen.size === this.owners.size) break;
    }
    return found;
  }
}
