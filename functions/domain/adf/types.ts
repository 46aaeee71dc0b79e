/** The Atlassian Document Format shapes this converter produces, and what it needs from its caller. */

export interface AdfMark {
  type: string;
  attrs?: Record<string, unknown>;
}

export interface AdfNode {
  type: string;
  attrs?: Record<string, unknown>;
  content?: AdfNode[];
  marks?: AdfMark[];
  text?: string;
}

export interface AdfDoc {
  type: 'doc';
  version: 1;
  content: AdfNode[];
}

export interface AdfWarning {
  code:
    | 'unmapped-mention'
    | 'unresolved-image'
    | 'unresolved-reference'
    | 'dropped-element'
    | 'flattened-element'
    | 'unconverted-html'
    | (string & {});
  message: string;
}

export interface HtmlToAdfContext {
  /** An Azure DevOps identity from a mention (`data-vss-mention="version:2.0,<guid>"`), to a Jira account. */
  mention?(ref: {
    adoId?: string;
    displayName: string;
  }): { accountId: string; displayName: string } | undefined;
  /** A `#123` work item reference in text, to the migrated Jira issue key (e.g. `MIG-42`). */
  workItemKey?(id: number): string | undefined;
  /**
   * The absolute browse URL of a Jira issue (e.g. `https://acme.atlassian.net/browse/MIG-42`). When given,
   * resolved references become inlineCards (smart links showing the issue's summary and status); without it
   * they are the key as text linked to the site-relative `/browse/MIG-42`, which needs no smart-link lookup.
   */
  issueUrl?(key: string): string | undefined;
  /**
   * For a reference `workItemKey` has no key for yet (an item a Jira import brings later): where a link to it
   * points, a search that finds the issue once it exists. The `#123` (or the link's words) is kept, linked there.
   */
  referenceHref?(id: number): string | undefined;
  /** An inline image's src (an ADO attachment URL), to the uploaded Jira attachment's Media Services file id. */
  image?(src: string): { mediaId: string; alt?: string; width?: number; height?: number } | undefined;
  /**
   * For an image `image` gave a media id: the block it is without one, and the `unresolved-image` warning that
   * goes with it; a caller that settles later which images show (deferred-images.ts) keeps them.
   */
  withoutMedia?(mediaId: string, block: AdfNode, warning: string): void;
  warn?(w: AdfWarning): void;
  /**
   * Where the caller keeps the original HTML (a file name, `description-12.html`), named by the note that stands
   * for HTML over the converter's limits (html-limits.ts).
   */
  original?: string;
}
