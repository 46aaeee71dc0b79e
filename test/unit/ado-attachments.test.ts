/** Which URLs a run may download with the source credential (functions/domain/ado-attachments.ts). */
import { describe, expect, it } from 'vitest';
import { isOrganisationAttachment } from '../../functions/domain/ado-attachments.ts';

const GUID = '098a6a7b-1c2d-4e5f-8a9b-0c1d2e3f4a5b';

describe('an attachment of the connected organisation', () => {
  it.each([
    [
      `https://dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}?fileName=a.png`,
      'https://dev.azure.com/fabrikam',
    ],
    [
      `https://dev.azure.com/Fabrikam/0a1b2c/_apis/wit/attachments/${GUID}?fileName=a.png`,
      'https://dev.azure.com/fabrikam',
    ],
    [
      `https://fabrikam.visualstudio.com/Proj/_apis/wit/attachments/${GUID}`,
      'https://dev.azure.com/fabrikam',
    ],
    [`https://dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}`, 'https://fabrikam.visualstudio.com'],
    [`https://tfs.example.com/tfs/Coll/P/_apis/wit/attachments/${GUID}`, 'https://tfs.example.com/tfs/Coll/'],
    [`/fabrikam/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [
      `http://127.0.0.1:3001/sandbox-org/p/_apis/wit/attachments/${GUID}`,
      'http://127.0.0.1:3001/sandbox-org',
    ],
  ])('fetches %s for %s', (src, org) => {
    expect(isOrganisationAttachment(src, org)).toBe(true);
  });

  it.each([
    // The trick: the pattern anywhere in the URL, on another host.
    ['http://attacker/x.png?x=/_apis/wit/attachments/&fileName=x.png', 'https://dev.azure.com/fabrikam'],
    [`https://attacker.example/fabrikam/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [`https://dev.azure.com/contoso/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [`https://contoso.visualstudio.com/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [`http://dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [`https://dev.azure.com:8443/fabrikam/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [
      `https://user:pw@dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}`,
      'https://dev.azure.com/fabrikam',
    ],
    [`https://dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}#x`, 'https://dev.azure.com/fabrikam'],
    [
      `https://dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}/../../../_apis/projects`,
      'https://dev.azure.com/fabrikam',
    ],
    [`https://dev.azure.com/fabrikam/_apis/wit/attachments/not-a-guid`, 'https://dev.azure.com/fabrikam'],
    [`https://dev.azure.com/fabrikam/a/b/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    [`https://dev.azure.com/fabrikam/_apis/wit/attachments/${GUID}/extra`, 'https://dev.azure.com/fabrikam'],
    [`//attacker.example/fabrikam/_apis/wit/attachments/${GUID}`, 'https://dev.azure.com/fabrikam'],
    // An encoded slash (or anything percent-encoded) in the project segment: a server that decodes it before
    // routing would climb out of the organisation.
    [
      `https://dev.azure.com/fabrikam/..%2Fcontoso/_apis/wit/attachments/${GUID}`,
      'https://dev.azure.com/fabrikam',
    ],
    [
      `https://fabrikam.visualstudio.com/%2e%2e%5Cx/_apis/wit/attachments/${GUID}`,
      'https://dev.azure.com/fabrikam',
    ],
    [
      `https://dev.azure.com/fabrikam/My%20Project/_apis/wit/attachments/${GUID}`,
      'https://dev.azure.com/fabrikam',
    ],
    ['data:image/png;base64,AAAA', 'https://dev.azure.com/fabrikam'],
  ])('never fetches %s for %s', (src, org) => {
    expect(isOrganisationAttachment(src, org)).toBe(false);
  });
});
