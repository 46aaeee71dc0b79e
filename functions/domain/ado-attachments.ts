/**
 * Which URLs the engine may download with the source connection's credential: an Azure DevOps attachment of
 * the connected organisation, and nothing else. An image or an AttachedFile relation is content anyone who
 * can edit a work item writes; fetching whatever it names would send the organisation's token (and the
 * service's network position) wherever they like (issue 17). Pure.
 *
 * An attachment URL is the organisation's origin and path, an optional project segment, then
 * `_apis/wit/attachments/{guid}` and nothing after it
 * (https://learn.microsoft.com/en-us/rest/api/azure/devops/wit/attachments/get): either form of the
 * organisation, `https://dev.azure.com/{org}` or `https://{org}.visualstudio.com`, is the same organisation.
 * The project segment holds no `%`: an encoded `/` or `\` (`..%2F`) that a server decodes before routing would
 * climb out of the organisation. (A project named in the URL with an encoded space stays a link, with the warning.)
 */

const GUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The organisation's places: origin and path prefix, in both of Azure DevOps Services' URL forms. */
function organisationPlaces(organizationUrl: string): { origin: string; prefix: string }[] {
  let org: URL;
  try {
    org = new URL(organizationUrl);
  } catch {
    return [];
  }
  const prefix = org.pathname.replace(/\/+$/, '');
  const places = [{ origin: org.origin, prefix }];
  const host = org.hostname.toLowerCase();
  const segments = prefix.split('/').filter(Boolean);
  if (host === 'dev.azure.com' && segments.length === 1)
    places.push({ origin: `https://${segments[0]?.toLowerCase()}.visualstudio.com`, prefix: '' });
  const vs = /^([a-z0-9-]+)\.visualstudio\.com$/.exec(host);
  if (vs && segments.length === 0) places.push({ origin: 'https://dev.azure.com', prefix: `/${vs[1]}` });
  return places;
}

/**
 * True when `src` is an attachment of the organisation at `organizationUrl`: same origin, the organisation's
 * path, an attachment GUID. A relative src counts as the organisation's origin (it can only be that).
 */
export function isOrganisationAttachment(src: string, organizationUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(src, organizationUrl);
  } catch {
    return false;
  }
  if (url.username || url.password || url.href.includes('#')) return false;
  return organisationPlaces(organizationUrl).some(
    ({ origin, prefix }) =>
      url.origin === origin &&
      new RegExp(`^${escapeRegExp(prefix)}(/[^/%]+)?/_apis/wit/attachments/${GUID}$`, 'i').test(url.pathname),
  );
}
