/**
 * Jira wiki markup -> ADF, as Jira Cloud converts an imported text: the sandbox's importer reads the files with the
 * domain's reader of Atlassian's parser (functions/domain/jira-import/wiki-read.ts), the one the verification of
 * an imported run expects the documents by.
 */
export {
  inlineToAdf,
  type WikiContext,
  wikiToAdf,
} from '../../../functions/domain/jira-import/wiki-read.ts';
