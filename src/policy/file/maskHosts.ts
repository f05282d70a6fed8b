// The hosts a masked secret may be substituted for (`"sandbox": { "mask": { NAME: [hosts] } }`,
// docs/sandbox.md "Masked secrets"): as `domains` spells hosts, an exact name (any case) or
// `*.example.com` for its sub-domains only, but nothing else: no other glob, no port, no path. The
// sandbox's proxy matches them with the engine's matchesDomainPattern, which reads them the same way.

/** One label of a host name: letters, digits and `-`, not starting or ending with `-`. */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/** `host.example.com` or `*.example.com`. */
export const MASK_HOST_PATTERN = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*$`);

/** Whether a string is a host pattern a mask may name (at most 253 characters). */
export function isMaskHost(value: string): boolean {
  return value.length <= 253 && MASK_HOST_PATTERN.test(value);
}
