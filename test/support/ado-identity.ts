/** An Azure DevOps IdentityRef as the work item APIs answer it (links, avatar, descriptor), for unit fixtures. */
export function adoIdentity(
  org: string,
  displayName: string,
  uniqueName: string,
  id: string,
  imageQuery = '',
) {
  return {
    displayName,
    url: `https://spsprodweu5.vssps.visualstudio.com/A1/_apis/Identities/${id}`,
    _links: { avatar: { href: `${org}/_apis/GraphProfile/MemberAvatars/aad.${id}` } },
    id,
    uniqueName,
    imageUrl: `${org}/_apis/GraphProfile/MemberAvatars/aad.${id}${imageQuery}`,
    descriptor: `aad.${id}`,
  };
}
